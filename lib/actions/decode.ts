/**
 * @module
 * The server's reading of an action call: a request's form body becomes the action's arguments,
 * for a call from the stub (`$ACTION_ARGS`, see `lib/shared/action_wire.ts`) and for a form posted with JavaScript
 * off (its bound arguments, then its fields). All of it is client input, so before devalue
 * revives anything, its flat node list is walked once, in time linear in its length, against the
 * caps of `limits.ts` and against what `encodeCall` can produce: nothing proportional to a number
 * the client chose is allocated first. What is refused throws `PayloadRejected`: a client's
 * mistake (400), never a server failure. What the arguments will hold while the action runs is
 * estimated on the way (`Invocation.bytes`), for the budget the endpoint counts it against.
 */
import { unflatten } from "devalue";
import { ACTION_LIMITS, type ActionLimits } from "./limits.ts";
import { boundField, REF_FIELD } from "./registry.ts";
import { ARGS_FIELD, FILE_FIELD, FRAMEWORK_FIELD, ONCE_FIELD } from "../shared/action_wire.ts";
import { UNKEPT_FIELD } from "../shared/kept_input.ts";
import { isSubmissionKey } from "./once.ts";

/** A request the decoder refused; `message` is short and safe to answer with. */
export class PayloadRejected extends Error {
  /** The cap it went over; none when the payload is malformed. */
  readonly cap?: keyof ActionLimits;

  constructor(message: string, cap?: keyof ActionLimits) {
    super(message);
    this.name = "PayloadRejected";
    this.cap = cap;
  }
}

/** A call from the stub, or a form posted by the browser itself. */
export interface Invocation {
  args: unknown[];
  /** Only for a form post: React's key for the form's `useActionState`, and the bound count. */
  form?: { key: string | null; bound: number };
  /**
   * The submission key the form or the call carries (`once.ts`); `readCall` makes it the
   * submission's id, a digest with what was sent (its files' bytes are read asynchronously).
   */
  once?: string;
  /** Fields the page marked never to keep (`UNKEPT_FIELD`s), for a call to a removed action. */
  unkept: string[];
  /**
   * About how many bytes the arguments hold, beyond the body they came from: every value revived
   * (`VALUE_BYTES` each), and the text of each string, which parsing copies.
   */
  bytes: number;
}

/**
 * What one revived value holds, at most, measured with V8: an empty object in an array about 64
 * bytes, a one-key object about 165 for its two values, a Map 65. (Numbers and short strings
 * hold less.)
 */
const VALUE_BYTES = 100;
/** A string's characters: two bytes each at most. */
const CHAR_BYTES = 2;

/**
 * The most what a body of `bodyBytes` decodes to can hold, known before it is read: each character
 * copied once, and as many values as the caps let through, or as fit in the body (a distinct value
 * takes two characters at least: a reference and a comma). `Invocation.bytes` counts a value shared
 * by several places at each, so it may say more: this is the bound.
 */
export function mostBytes(bodyBytes: number, limits = ACTION_LIMITS): number {
  const values = Math.min(limits.values + limits.fields, Math.ceil(bodyBytes / 2));
  return VALUE_BYTES * values + CHAR_BYTES * bodyBytes;
}

const KEY_FIELD = `${FRAMEWORK_FIELD}KEY`;

/** What the endpoint calls with a request's body: a call if it has `$ACTION_ARGS`, else a form. */
export function decodeInvocation(body: FormData, limits = ACTION_LIMITS): Invocation {
  const invocation = body.has(ARGS_FIELD)
    ? callInvocation(body, limits)
    : formInvocation(body, limits);
  const once = body.get(ONCE_FIELD);
  if (once === null) return invocation;
  if (!isSubmissionKey(once)) throw new PayloadRejected(`${ONCE_FIELD} is not a submission key`);
  return { ...invocation, once };
}

/** The arguments of a call from the stub; refuses anything `encodeCall` cannot have made. */
export function decodeCall(body: FormData, limits = ACTION_LIMITS): unknown[] {
  return callInvocation(body, limits).args;
}

function callInvocation(body: FormData, limits: ActionLimits): Invocation {
  countFields(body, limits);
  const text = body.get(ARGS_FIELD);
  if (typeof text !== "string") throw new PayloadRejected(`${ARGS_FIELD} is not text`);
  // Looked up once: `FormData.get` is a linear scan, and a payload may name a file many times.
  const files = new Map<string, File>();
  for (const [name, value] of body) {
    if (typeof value !== "string" && name.startsWith(FILE_FIELD) && !files.has(name)) {
      files.set(name, value);
    }
  }
  const unkept: string[] = [];
  const revived = revive(text, limits, limits.arguments, {
    Blob: (field: string) => {
      const file = files.get(field);
      if (!file) throw new PayloadRejected("a file of the arguments is missing");
      return file;
    },
    FormData: (entries: unknown) => revivedForm(entries, unkept),
  });
  return { ...revived, unkept };
}

/**
 * A form posted without JavaScript: its arguments bound on the server render (React's prefix
 * names the fields of the form that was sent), then the form's own fields.
 */
function formInvocation(body: FormData, limits: ActionLimits): Invocation {
  countFields(body, limits);
  let boundText: FormDataEntryValue | null = null;
  for (const name of body.keys()) {
    if (!name.startsWith(REF_FIELD)) continue;
    boundText = body.get(boundField(name.slice(REF_FIELD.length)));
    break;
  }
  // The form itself is one more argument. Bound arguments came from our own render, but back
  // through the client: checked all the same, and never files.
  const bound = typeof boundText === "string"
    ? revive(boundText, limits, limits.arguments - 1)
    : { args: [], bytes: 0 };
  const key = body.get(KEY_FIELD);
  const unkept: string[] = [];
  const form = withoutFrameworkFields(body, unkept);
  let bytes = bound.bytes;
  for (const [name, value] of form) {
    bytes += VALUE_BYTES +
      CHAR_BYTES * (name.length + (typeof value === "string" ? value.length : 0));
  }
  return {
    args: [...bound.args, form],
    // React's `useActionState` binds the previous state, which its key does not count.
    form: { key: typeof key === "string" ? key : null, bound: bound.args.length - 1 },
    unkept,
    bytes,
  };
}

/**
 * The form as the action sees it: without the hidden fields React renders for progressive
 * enhancement, which the browser submits along with the user's. One pass: `FormData.delete` scans
 * every entry, so deleting field by field would be quadratic. The names the page marked never to
 * keep go to `unkept`.
 */
export function withoutFrameworkFields(form: FormData, unkept: string[] = []): FormData {
  const fields = new FormData();
  for (const [name, value] of form) {
    if (!name.startsWith(FRAMEWORK_FIELD)) fields.append(name, value);
    else if (name === UNKEPT_FIELD && typeof value === "string") unkept.push(value);
  }
  return fields;
}

function countFields(body: FormData, limits: ActionLimits): void {
  let count = 0;
  for (const _ of body) {
    if (++count > limits.fields) {
      throw new PayloadRejected(`more than ${limits.fields} form fields`, "fields");
    }
  }
}

type Revivers = Parameters<typeof unflatten>[1];

/** Checks devalue `text` within `limits`, then revives it: the list of arguments. */
function revive(
  text: string,
  limits: ActionLimits,
  maxArgs: number,
  revivers?: Revivers,
): Pick<Invocation, "args" | "bytes"> {
  if (text.length > limits.payloadLength) {
    throw new PayloadRejected(
      `arguments longer than ${limits.payloadLength} characters`,
      "payloadLength",
    );
  }
  let nodes: unknown;
  try {
    nodes = JSON.parse(text);
  } catch {
    throw malformed();
  }
  const values = checkNodes(nodes, limits, maxArgs, revivers !== undefined);
  try {
    const args = unflatten(nodes as unknown[], revivers) as unknown[];
    return { args, bytes: VALUE_BYTES * values + CHAR_BYTES * text.length };
  } catch (error) {
    // devalue's own checks (an invalid date, a view past its buffer's end, ...)
    throw error instanceof PayloadRejected ? error : malformed();
  }
}

/** Entries `encodeCall` made of a FormData, without the framework's fields (see above). */
function revivedForm(entries: unknown, unkept: string[]): FormData {
  if (!Array.isArray(entries)) throw malformed();
  const form = new FormData();
  for (const entry of entries) {
    const [name, value] = Array.isArray(entry) ? entry : [];
    if (typeof name !== "string" || !(typeof value === "string" || value instanceof Blob)) {
      throw malformed();
    }
    if (!name.startsWith(FRAMEWORK_FIELD)) form.append(name, value);
    else if (name === UNKEPT_FIELD && typeof value === "string") unkept.push(value);
  }
  return form;
}

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
function checkNodes(
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

function malformed(): PayloadRejected {
  return new PayloadRejected("the payload cannot be decoded");
}

function isCount(n: unknown): boolean {
  return Number.isSafeInteger(n) && (n as number) >= 0;
}

/** A plain array node: a list of references (tagged nodes start with their tag). */
function isList(node: unknown): node is unknown[] {
  return Array.isArray(node) && typeof node[0] !== "string";
}
