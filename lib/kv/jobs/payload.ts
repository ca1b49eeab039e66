/**
 * @module
 * What an enqueue checks of a job before KV sees it: that its keys and message fit KV's limits, and
 * that its payload holds nothing KV would keep as a bare object.
 */
import { checkKey, nameOf } from "../key_too_long.ts";
import { assertFits, KvLimitError } from "../limits.ts";
import { deadLetter } from "./dead.ts";
import { deadKey, type JobMessage, triedKey } from "./message.ts";

/** What KV's serializer keeps as it was, besides plain objects and arrays (walked into). */
const KEPT = [
  Date,
  RegExp,
  Map,
  Set,
  ArrayBuffer,
  Blob,
  Error,
  Deno.KvU64,
  String,
  Number,
  Boolean,
];

/** What to pass instead of an object KV would store as `{}` (or without its class). */
const INSTEAD: Record<string, string> = {
  FormData: "Object.fromEntries(form), or the fields the job needs",
  URL: "url.href",
  URLSearchParams: "params.toString() or Object.fromEntries(params)",
  Headers: "Object.fromEntries(headers), or the headers the job needs",
};

/** A value the payload's walk has still to read, and the way to it (for the error only). */
interface Visit {
  value: object;
  parent?: Visit;
  /** From the parent: an array's index, an object's key, or how a Map or Set holds it. */
  step?: number | string;
}

/** Where a visit sits in the payload, as the error names it: `payload.items[2].link`. */
function pathOf(visit: Visit): string {
  const steps: string[] = [];
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) {
    steps.push(typeof at.step === "number" ? `[${at.step}]` : `${at.step}`);
  }
  return `payload${steps.reverse().join("")}`;
}

/**
 * Refuses a payload holding an object KV cannot keep faithfully - a `FormData`, `URL`, `Headers`,
 * a class's instance - which would reach `run` as `{}` or a bare object, its data or methods gone.
 * Plain objects, arrays, Maps and Sets are walked into (cycles once); dates, typed arrays and the
 * rest KV keeps are let through. The walk keeps its own stack: recursing, it overflowed the call
 * stack at about 1,800 levels, half the depth KV's serializer takes - a payload KV keeps, refused
 * with a `RangeError`.
 */
export function keptFaithfully(name: string, payload: unknown): void {
  if (typeof payload !== "object" || payload === null) return;
  const seen = new Set<object>();
  const stack: Visit[] = [{ value: payload }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    const { value } = visit;
    if (seen.has(value)) continue;
    seen.add(value);
    const parent = visit;
    const push = (item: unknown, step: number | string) => {
      if (typeof item === "object" && item !== null) stack.push({ value: item, parent, step });
    };
    if (Array.isArray(value)) value.forEach(push);
    else if (value instanceof Map) {
      for (const [key, item] of value) push(key, " (a key)"), push(item, ".get()");
    } else if (value instanceof Set) {
      for (const item of value) push(item, " (an item)");
    } else if (!ArrayBuffer.isView(value) && !KEPT.some((kept) => value instanceof kept)) {
      const prototype = Object.getPrototypeOf(value);
      if (prototype === Object.prototype || prototype === null) {
        for (const [key, item] of Object.entries(value)) push(item, `.${key}`);
        continue;
      }
      const type = prototype?.constructor?.name || "an object of a class";
      throw new TypeError(
        `Job "${name}": its payload holds a ${type} (at ${
          pathOf(visit)
        }), which the store keeps as a bare object, its data lost: pass ${
          INSTEAD[type] ?? "a plain object, an array, or a Date, Map, Set, string or number"
        } instead`,
      );
    }
  }
}

/**
 * Refuses, with KV's limit named, a job whose keys or message KV would refuse at the commit: its id
 * (an enqueue's key, often a client's) too long is a `KeyTooLongError` (400).
 */
export function fits(name: string, id: string, message: JobMessage): void {
  // The longest of its keys: a failed try's mark (a number is 9 bytes, whichever).
  checkKey(() => `Job ${nameOf(name)}`, triedKey(name, id, 0), 3, 4);
  try {
    // Its largest value: the dead letter it may become (the message less its tries, plus a
    // failure's digest and time), which would otherwise be refused unlogged.
    assertFits(deadKey(name, id), deadLetter(message, "00000-00000"));
  } catch (error) {
    if (!(error instanceof KvLimitError)) throw error;
    throw new KvLimitError(`Job "${name}": ${error.message} (its payload)`);
  }
}
