/**
 * @module
 * A collection's declaration checked at run time, whatever the types said, and resolved: each
 * index to the functions that read and normalise its value, each state machine to its ways.
 */
import { feedSettingsProblem, wholeWithin } from "../feed_bounds.ts";
import { MAX_EXPIRE_MS } from "../limits.ts";
import type { IndexSpec, LiveOptions } from "./collection.ts";
import { type Declared, isKeyPart, type ResolvedIndex } from "./declared.ts";
import type { CollectionSchema } from "./schema.ts";

/** A declaration as `resolveDeclaration` checks it: at run time, whatever the types said. */
export interface Declaration {
  schema: CollectionSchema;
  indexes?: Record<string, IndexSpec<object>>;
  transitions?: Record<string, unknown>;
  live?: LiveOptions;
}

/** The longest change events are kept. */
const MAX_RETAIN_MS = MAX_EXPIRE_MS;

export function resolveDeclaration(
  name: string,
  { schema, indexes = {}, transitions = {}, live = {} }: Declaration,
): Declared {
  const problem = (what: string) => new TypeError(`collection("${name}"): ${what}`);
  if (typeof name !== "string" || name.length === 0 || name.length > 100) {
    throw problem("the name must be 1 to 100 characters");
  }
  if (typeof schema?.["~standard"]?.validate !== "function") {
    throw problem("schema must be a valibot schema (or another Standard Schema)");
  }
  const resolved = new Map<string, ResolvedIndex>();
  for (const [index, spec] of Object.entries(indexes)) {
    if (!index || index.length > 100) throw problem(`index names must be 1 to 100 characters`);
    const key = spec?.key;
    if (typeof key !== "string" && typeof key !== "function") {
      throw problem(`index ${index} needs a key: a field name or a function of the item`);
    }
    const read = typeof key === "string"
      ? (item: object) => (item as Record<string, unknown>)[key]
      : key as (item: object) => unknown;
    const normalize = spec.normalize;
    if (normalize !== undefined && typeof normalize !== "function") {
      throw problem(`index ${index}: normalize must be a function of a string value`);
    }
    const asked = (value: unknown) => {
      if (normalize === undefined || typeof value !== "string") return value;
      const normal = normalize(value);
      if (typeof normal !== "string") {
        throw problem(`index ${index}: normalize must return a string, not ${typeof normal}`);
      }
      // A value is normalised again where it passes on (a live view's snapshot lists the view's
      // value): one that moved again looked at another key, and the view showed no item.
      if (normalize(normal) !== normal) {
        throw problem(`index ${index}: normalize must give its own answers back unchanged`);
      }
      return normal;
    };
    resolved.set(index, {
      name: index,
      unique: spec.unique === true,
      spelling: JSON.stringify([typeof key, String(key), normalize && String(normalize)]),
      asked,
      valueOf(item) {
        const value = asked(read(item));
        if (value === undefined || value === null) return undefined;
        if (!isKeyPart(value)) {
          throw problem(
            `index ${index} gave ${Object.prototype.toString.call(value)}: an index value is a ` +
              `string, number, bigint, boolean or Uint8Array (undefined or null leaves the item out)`,
          );
        }
        return value;
      },
    });
  }
  const machines = new Map<string, Map<string, Set<string>>>();
  for (const [field, machine] of Object.entries(transitions)) {
    if (!machine || typeof machine !== "object") {
      throw problem(`transitions.${field} must map states`);
    }
    const ways = new Map<string, Set<string>>();
    for (const [from, to] of Object.entries(machine)) {
      if (!Array.isArray(to)) throw problem(`transitions.${field}.${from} must be an array`);
      ways.set(from, new Set(to.map(String)));
    }
    machines.set(field, ways);
  }
  const retainMs = live.retainMs ?? 3_600_000;
  // KV's `expireIn` of every change event: Infinity ("keep them"), a fraction or 10^16 passed
  // here and failed every write of the collection with KV's bare TypeError.
  if (!wholeWithin(retainMs, 1, MAX_RETAIN_MS)) {
    throw problem(`live.retainMs must be whole milliseconds from 1 to a year's (${MAX_RETAIN_MS})`);
  }
  const feedProblem = feedSettingsProblem(live);
  if (feedProblem) throw problem(`live.${feedProblem}`);
  return { name, schema, indexes: resolved, transitions: machines, retainMs };
}
