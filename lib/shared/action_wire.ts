/**
 * @module
 * How a server action call travels, shared by the browser stub and the server endpoint. A call is
 * a multipart body: the arguments as `devalue` in one field, and every file among them (alone or
 * inside a `FormData`) in a field of its own, so uploads stream as parts instead of text. The
 * result comes back as `devalue` too. Browser-safe, and only what the stub needs: the server reads
 * a call, client input, with `lib/actions/decode.ts`.
 */
import { parse, stringify } from "devalue";

/** URL prefix of the action endpoint: `POST /_action/:id`. */
export const ACTION_PATH = "/_action";
/** Field holding the call's arguments; a form posted with JavaScript off has none. */
export const ARGS_FIELD = "$ACTION_ARGS";
export { FRAMEWORK_FIELD } from "./framework_fields.ts";
/** Response header of a call whose action redirected: the browser goes there. */
export const REDIRECT_HEADER = "Action-Redirect";
/**
 * Field holding a submission's key (`lib/actions/once.ts`): a hidden input of every form the server
 * renders, and a field of each call the stub makes with a form among its arguments.
 */
export const ONCE_FIELD = "$ACTION_ONCE";
/** Prefix of the fields holding a call's files. */
export const FILE_FIELD = "$ACTION_FILE_";

export function actionUrl(id: string): string {
  return `${ACTION_PATH}/${id}`;
}

/** The request body for a call with `args`; `once`, its submission key. */
export function encodeCall(args: unknown[], once?: string): FormData {
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
  if (once) body.set(ONCE_FIELD, once);
  return body;
}

/**
 * What `action` returned, as `devalue`. A value it cannot send (a function, a class instance)
 * fails naming the action and where in the result it is, as island props do (`shared/props.ts`).
 */
export function encodeResult(value: unknown, action: string): string {
  try {
    return stringify(value);
  } catch (error) {
    const path = (error as { path?: string }).path ?? "";
    const reason = error instanceof Error ? error.message : String(error);
    throw new TypeError(
      `server action ${action} returned a value that cannot be sent to the browser: ` +
        `result${path} (${reason})`,
    );
  }
}

export function decodeResult(text: string): unknown {
  return parse(text);
}
