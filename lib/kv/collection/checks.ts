/**
 * @module
 * The checks a collection makes for another collection's writes (`checks`): that one of its items
 * is still the version read (`check`), or that no item of it has a value in a unique index
 * (`checkAbsent`, a check for KV's `versionstamp: null`). Each remembers what it is about, so a
 * write it refuses says which in its 409: the names the product declared (the collection, the
 * index), never an id or a value, which a user who gets the message may not be meant to see.
 */
import { type Declared, isIndexValue, isKeyPart, keys } from "./declared.ts";
import { ConflictError } from "./errors.ts";

/** What a check is about: the checked collection and, for an absence, its unique index. */
interface Checked {
  collection: string;
  index?: string;
}

// Keyed by the check object itself: a check a product made by hand names nothing.
const made = new WeakMap<Deno.AtomicCheck, Checked>();

/** Holds while item `id` of `d` is still `versionstamp`. */
export function itemCheck(d: Declared, id: string, versionstamp: string): Deno.AtomicCheck {
  const check = { key: keys.item(d, id), versionstamp };
  made.set(check, { collection: d.name });
  return check;
}

/** Holds while no item of `d` has `value` in its unique index `index`. */
export function absenceCheck(d: Declared, index: string, asked: unknown): Deno.AtomicCheck {
  const unique = d.indexes.get(index);
  if (!unique?.unique) {
    // Only a unique index has one key per value; "no item in this view" is no single key's.
    throw new TypeError(`${d.name}: checkAbsent needs a unique index, and "${index}" is not one`);
  }
  const value = unique.asked(asked);
  if (!isKeyPart(value)) throw new TypeError(`${d.name}: not a value of ${index}`);
  // A value too long for any key of the index (a user's text, passed as find() takes it) is on no
  // item: the check holds, on the index's own prefix, which is no entry's key. A TypeError made
  // such a request a failure (500, a Sentry event) where find() answers null.
  const key = isIndexValue(d, index, value)
    ? keys.unique(d, index, value)
    : keys.listing(d, { index });
  const check = { key, versionstamp: null };
  made.set(check, { collection: d.name, index });
  return check;
}

/** The refusal of a write to `collection` whose `check` no longer holds. */
export function checkFailed(collection: string, check: Deno.AtomicCheck): ConflictError {
  const checked = made.get(check);
  return new ConflictError(
    collection,
    check.versionstamp === null ? "exists" : "checked",
    checked?.index,
    checked?.collection,
  );
}
