/**
 * @module
 * The check of an action call's arguments before devalue revives them: their flat node list,
 * walked once in time linear in its length, against the caps of `limits.ts` and against what
 * `encodeCall` can produce, so that nothing proportional to a number the client chose is
 * allocated first (`decode.ts` runs it).
 */
import { FILE_FIELD } from "../shared/action_wire.ts";
import type { ActionLimits } from "./limits.ts";
import { malformed, PayloadRejected } from "./rejected.ts";

// devalue's references below 0 that stand for values: undefined, NaN, ±Infinity and -0. The
// others, -2 (a hole) and -7 (a sparse array), `encodeCall` only makes of arrays with holes,
// which no argument needs: refused, so no array's length is ever a number the client chose.
const VALUE_REFS = new Set([-1, -3, -4, -5, -6]);
const HOLES = new Set([-2, -7]);

// Tagged nodes `[tag, ...]` devalue revives on its own that hold one string.
const STRING_TAGS = new Set([
  "Date",
  "URL",
  "URLSearchParams",
  "ArrayBuffer",
  "Temporal.Duration",
  "Temporal.Instant",
  "Temporal.PlainDate",
  "Temporal.PlainTime",
  "Temporal.PlainDateTime",
  "Temporal.PlainMonthDay",
  "Temporal.PlainYearMonth",
  "Temporal.ZonedDateTime",
]);
const VIEW_TAGS = new Set([
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Float16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
  "DataView",
]);
const BIGINT = /^-?\d+$/;

const NEW = 0, OPEN = 1, DONE = 2;

/**
 * Walks devalue's flat node list from the arguments list (node 0) as `unflatten` will, in the
 * same order, and throws unless every node is one `stringify` makes (with our revivers if
 * `custom`) and every count is within `limits`. Each node is checked once; its value count and
 * height are kept, so a node referenced again costs one step but counts in full: that bounds the
 * FormData reviver, which devalue runs again at every reference to shared entries. Returns the
 * count of values.
 */
export function checkNodes(
  nodes: unknown,
  limits: ActionLimits,
  maxArgs: number,
  custom: boolean,
): number {
  if (!Array.isArray(nodes) || !isList(nodes[0])) throw malformed();
  if (nodes[0].length > maxArgs) {
    throw new PayloadRejected(`more than ${limits.arguments} arguments`, "arguments");
  }
  const state = new Uint8Array(nodes.length);
  const size = new Float64Array(nodes.length);
  const height = new Float64Array(nodes.length);
  const isIndex = (ref: unknown): ref is number =>
    Number.isInteger(ref) && (ref as number) >= 0 && (ref as number) < nodes.length;
  const tooDeep = () => new PayloadRejected(`nested deeper than ${limits.depth} levels`, "depth");

  // Devalue recurses through the same nodes in the same order: `level` is its depth too.
  const visit = (index: number, level: number): void => {
    if (level > limits.depth) throw tooDeep();
    state[index] = OPEN;
    let values = 1;
    let tallest = 0;
    const count = (more: number) => {
      values += more;
      if (values > limits.values) {
        throw new PayloadRejected(`more than ${limits.values} values`, "values");
      }
    };
    const child = (ref: unknown) => {
      if (VALUE_REFS.has(ref as number)) {
        values += 1;
        tallest ||= 1;
      } else if (HOLES.has(ref as number)) {
        throw new PayloadRejected("arrays with holes are not accepted");
      } else if (!isIndex(ref)) {
        throw malformed();
      } else if (state[ref] === OPEN) {
        // A cycle, back to a value still being revived: devalue links it, once.
        values += 1;
        tallest ||= 1;
      } else {
        if (state[ref] === NEW) visit(ref, level + 1);
        values += size[ref];
        tallest = Math.max(tallest, height[ref]);
      }
      count(0);
    };

    const node = nodes[index];
    if (isList(node)) {
      for (const ref of node) child(ref);
    } else if (Array.isArray(node)) {
      checkTagged(node, child, count);
    } else if (node !== null && typeof node === "object") {
      for (const [key, ref] of Object.entries(node)) {
        if (key === "__proto__") throw malformed();
        child(ref);
      }
    } else if (typeof node === "number" && !Number.isFinite(node)) {
      throw malformed(); // JSON's 1e999: `stringify` writes -4 for Infinity
    }

    state[index] = DONE;
    size[index] = values;
    height[index] = tallest + 1;
    if (height[index] > limits.depth) throw tooDeep();
  };

  const checkTagged = (
    [tag, ...rest]: unknown[],
    child: (ref: unknown) => void,
    count: (values: number) => void,
  ) => {
    const [first] = rest;
    const ensure = (ok: boolean) => {
      if (!ok) throw malformed();
    };
    if (STRING_TAGS.has(tag as string)) {
      ensure(rest.length === 1 && typeof first === "string");
      if (tag === "URLSearchParams" || tag === "URL") {
        // Each `&` may start an entry, and each entry is a value revived (a URL's when the action
        // reads its `searchParams`): 1 MB of `a&a&...` was half a million of them, some 40 MB
        // and most of a second of parsing, where the text's length alone counted 2 MB.
        const entries = queryEntries(first as string);
        if (entries > limits.formDataEntries) {
          throw new PayloadRejected(
            `a ${tag} of more than ${limits.formDataEntries} query entries`,
            "formDataEntries",
          );
        }
        count(entries);
      }
    } else if (tag === "BigInt") {
      ensure(rest.length === 1 && typeof first === "string");
      const digits = (first as string).replace(/^-/, "").length;
      if (digits > limits.bigintDigits) {
        throw new PayloadRejected(
          `a BigInt longer than ${limits.bigintDigits} digits`,
          "bigintDigits",
        );
      }
      ensure(BIGINT.test(first as string));
    } else if (tag === "RegExp") {
      // Never compiled: V8 builds each Unicode property escape anew, so making the RegExp alone
      // took 3 s for 2.8 KB of `\p{RGI_Emoji}` (v flag), minutes for a mebibyte, the event loop
      // held throughout - and running a client's pattern is a ReDoS. A pattern is a string.
      throw new PayloadRejected("regular expressions are not accepted");
    } else if (VIEW_TAGS.has(tag as string)) {
      // Only a view on a buffer node: on anything else, devalue's typed array would allocate.
      const buffer = isIndex(first) ? nodes[first] : undefined;
      const [, offset, length] = rest;
      ensure(
        Array.isArray(buffer) && buffer[0] === "ArrayBuffer" &&
          (rest.length === 1 || rest.length === 3 && isCount(offset) && isCount(length)),
      );
      child(first);
    } else if (tag === "Object") {
      ensure(rest.length === 1);
      child(first);
    } else if (tag === "Set") {
      for (const ref of rest) child(ref);
    } else if (tag === "Map" || tag === "null") {
      ensure(rest.length % 2 === 0);
      for (let i = 0; i < rest.length; i += 2) {
        if (tag === "Map") child(rest[i]);
        else ensure(typeof rest[i] === "string" && rest[i] !== "__proto__");
        child(rest[i + 1]);
      }
    } else if (custom && tag === "Blob") {
      const field = isIndex(first) ? nodes[first] : undefined;
      ensure(rest.length === 1 && typeof field === "string" && field.startsWith(FILE_FIELD));
      child(first);
    } else if (custom && tag === "FormData") {
      const entries = isIndex(first) ? nodes[first] : undefined;
      ensure(rest.length === 1 && isList(entries));
      if ((entries as unknown[]).length > limits.formDataEntries) {
        throw new PayloadRejected(
          `a FormData of more than ${limits.formDataEntries} entries`,
          "formDataEntries",
        );
      }
      child(first);
    } else {
      throw malformed();
    }
  };

  visit(0, 1);
  return size[0];
}

/** The most entries `URLSearchParams` can make of `text`: one more than its `&`s. */
function queryEntries(text: string): number {
  let entries = 1;
  for (let at = text.indexOf("&"); at >= 0; at = text.indexOf("&", at + 1)) entries++;
  return entries;
}

function isCount(n: unknown): boolean {
  return Number.isSafeInteger(n) && (n as number) >= 0;
}

/** A plain array node: a list of references (tagged nodes start with their tag). */
function isList(node: unknown): node is unknown[] {
  return Array.isArray(node) && typeof node[0] !== "string";
}
