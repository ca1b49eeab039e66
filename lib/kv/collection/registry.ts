/**
 * @module
 * The collections `collection()` made in this process: the declaration behind each, for the
 * framework's own modules, and each by name, for `deno task kv:reindex`.
 */
import type { Collection } from "./collection.ts";
import type { Declared } from "./declared.ts";

const declarations = new WeakMap<object, Declared>();

/**
 * The collections declared in this process, by name, held weakly: what `deno task kv:reindex`
 * finds once the app's modules are loaded (a module declares its collection as it is evaluated).
 */
const declaredByName = new Map<string, WeakRef<Collection<unknown>>[]>();

/** Records `collection`, made by `collection()` from `d`. */
export function register(collection: Collection<unknown>, d: Declared): void {
  declarations.set(collection, d);
  const named = (declaredByName.get(d.name) ?? []).filter((ref) => ref.deref() !== undefined);
  declaredByName.set(d.name, [...named, new WeakRef(collection)]);
}

/** The collections declared as `name` and still held: more than one is a product's mistake. */
export function collectionsNamed(name: string): Collection<unknown>[] {
  return (declaredByName.get(name) ?? []).flatMap((ref) => ref.deref() ?? []);
}

/** The names of the collections declared and still held. */
export function collectionNames(): string[] {
  return [...declaredByName.keys()].filter((name) => collectionsNamed(name).length > 0).sort();
}

/** The declaration behind a collection, for the framework's own modules (`changeStream`). */
export function declaredOf(collection: object): Declared {
  const d = declarations.get(collection);
  if (!d) throw new TypeError("Not a collection made by collection()");
  return d;
}
