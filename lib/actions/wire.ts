/**
 * @module
 * How a server action call travels, shared by the browser stub and the server endpoint. A call is
 * a multipart body: the arguments as `devalue` in one field, and every file among them (alone or
 * inside a `FormData`) in a field of its own, so uploads stream as parts instead of text. The
 * result comes back as `devalue` too. Browser-safe: no server-only API here.
 */
import { parse, stringify } from "devalue";

/** URL prefix of the action endpoint: `POST /_action/:id`. */
export const ACTION_PATH = "/_action";
/** Field holding the call's arguments; a form posted with JavaScript off has none. */
export const ARGS_FIELD = "$ACTION_ARGS";
/** Fields React and the framework add to a form (`$ACTION_REF_…`, `$ACTION_KEY`, …). */
export const FRAMEWORK_FIELD = "$ACTION_";
/** Response header of a call whose action redirected: the browser goes there. */
export const REDIRECT_HEADER = "Action-Redirect";
const FILE_FIELD = "$ACTION_FILE_";

export function actionUrl(id: string): string {
  return `${ACTION_PATH}/${id}`;
}

/** The request body for a call with `args`. */
export function encodeCall(args: unknown[]): FormData {
  const body = new FormData();
  let files = 0;
  const text = stringify(args, {
    // A field name, truthy: devalue serializes the value itself on a falsy result.
    Blob: (value) => {
      if (!(value instanceof Blob)) return false;
      const field = `${FILE_FIELD}${files++}`;
      body.append(field, value);
      return field;
    },
    FormData: (value) => value instanceof FormData && [...value],
  });
  body.set(ARGS_FIELD, text);
  return body;
}

/** The arguments of a call; throws on anything `encodeCall` cannot have made. */
export function decodeCall(body: FormData): unknown[] {
  const text = body.get(ARGS_FIELD);
  if (typeof text !== "string") throw new TypeError(`${ARGS_FIELD} is missing`);
  const args = parse(text, {
    Blob: (field) => {
      const file = typeof field === "string" && field.startsWith(FILE_FIELD) && body.get(field);
      if (!(file instanceof Blob)) throw new TypeError(`${String(field)} is not a file`);
      return file;
    },
    FormData: (entries) => formDataOf(entries),
  });
  if (!Array.isArray(args)) throw new TypeError("the arguments are not an array");
  return args;
}

function formDataOf(entries: unknown): FormData {
  if (!Array.isArray(entries)) throw new TypeError("FormData entries are not an array");
  const form = new FormData();
  for (const entry of entries) {
    const [key, value] = Array.isArray(entry) ? entry : [];
    if (typeof key !== "string" || !(typeof value === "string" || value instanceof Blob)) {
      throw new TypeError("a FormData entry is not [name, string | File]");
    }
    form.append(key, value);
  }
  return withoutFrameworkFields(form);
}

/**
 * The form as the action sees it: without the hidden fields React renders for progressive
 * enhancement, which the browser submits along with the user's.
 */
export function withoutFrameworkFields(form: FormData): FormData {
  for (const key of new Set(form.keys())) {
    if (key.startsWith(FRAMEWORK_FIELD)) form.delete(key);
  }
  return form;
}

export function encodeResult(value: unknown): string {
  return stringify(value);
}

export function decodeResult(text: string): unknown {
  return parse(text);
}
