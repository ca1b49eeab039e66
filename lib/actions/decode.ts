/**
 * @module
 * The server's reading of an action call: a request's form body becomes the action's arguments,
 * for a call from the stub (`$ACTION_ARGS`, see `lib/shared/action_wire.ts`) and for a form posted
 * with JavaScript off (its bound arguments, then its fields). All of it is client input: counts
 * are capped before anything is read in full, and devalue revives nothing its checked node list
 * (`devalue_nodes.ts`) does not allow. What is refused throws `PayloadRejected` (`rejected.ts`).
 * What the arguments will hold while the action runs is estimated on the way
 * (`Invocation.bytes`), for the budget the endpoint counts it against.
 */
import { unflatten } from "devalue";
import { ACTION_LIMITS, type ActionLimits } from "./limits.ts";
import { boundField, REF_FIELD } from "./registry.ts";
import { ARGS_FIELD, FILE_FIELD, FRAMEWORK_FIELD, ONCE_FIELD } from "../shared/action_wire.ts";
import { UNKEPT_FIELD } from "../shared/kept_input.ts";
import { isSubmissionKey } from "./once.ts";
import { malformed, PayloadRejected } from "./rejected.ts";
import { checkNodes } from "./devalue_nodes.ts";

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
