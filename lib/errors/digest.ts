/**
 * @module
 * Digests: a short name for a server failure that a user can read aloud and ops can search the
 * logs for. The same error (message and where it was thrown) always gets the same digest, so
 * repeats of one bug share it and `request_id` tells the occurrences apart - under every entry
 * point, with telemetry on or off, from whichever folder the app runs.
 */
import { createHash } from "node:crypto";

// Crockford's base32: no I, L, O or U, so nothing is misread over the phone; its hyphen groups
// the ten characters (50 bits) as two readable halves: `7KQ2M-XF9PA`.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The digest of `error`. `where` names the part of the app that failed (a route's pattern, an
 * action's module and name): it counts only when no frame of the stack is the app's own. An
 * `AbortSignal.timeout` fires in Deno's timer, so its `TimeoutError` holds no frame of the code
 * that awaited it; without `where`, every hung call of the whole app would share one digest.
 */
export function digestOf(error: unknown, where?: string): string {
  const { message, stack } = describe(error);
  const bytes = createHash("sha256").update(`${message}\n${placeOf(stack, where)}`).digest();
  let digest = "";
  for (let i = 0; i < 10; i++) digest += (i === 5 ? "-" : "") + ALPHABET[bytes[i] & 31];
  return digest;
}

/** The project's root as stack frames name it (`file:///srv/app/`): this file is `lib/errors/`. */
const ROOT = new URL("../../", import.meta.url).href;
const FRAME = /^\s+at /;
/**
 * Frames of the framework, the packages and Deno: the way a request reached the app's code, which
 * differs by entry point and by what telemetry runs (the Sentry SDK's middleware is a frame of its
 * own), while the bug stays the same.
 */
const PLUMBING = /^(?:lib\/|node_modules\/|ext:|node:)/;
/** A frame's place: its path, line and column, with or without a function name before it. */
const PLACE = /(?:^|\()([^()]+:\d+:\d+)\)?$/;

/**
 * Where the error was thrown: the stack's frames in the app's own code, paths relative to the
 * project; when none is the app's (a failure in the framework, a package or Deno), the part of the
 * app that failed and the first frame.
 */
function placeOf(stack: string, where = ""): string {
  const frames = stack.split("\n").filter((line) => FRAME.test(line))
    .map((line) => line.replace(FRAME, "").replaceAll(ROOT, ""));
  const own = frames.filter((frame) => {
    const place = frame.match(PLACE)?.[1];
    return place !== undefined && !PLUMBING.test(place);
  });
  if (own.length > 0) return own.join("\n");
  return (where ? [where, ...frames.slice(0, 1)] : frames.slice(0, 1)).join("\n");
}

export interface ErrorDescription {
  name: string;
  message: string;
  stack: string;
}

/** Name, message and stack of anything thrown, Error or not (`throw "oops"`, `throw {code: 1}`). */
export function describe(error: unknown): ErrorDescription {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, stack: error.stack ?? "" };
  }
  let message: string;
  try {
    message = typeof error === "string" ? error : JSON.stringify(error) ?? String(error);
  } catch { // cycles, BigInt
    message = Object.prototype.toString.call(error);
  }
  return { name: "NonError", message, stack: "" };
}
