/**
 * @module
 * Structured logs: one JSON object per line on stdout, so Deno Deploy's log search finds a failure
 * by its digest. Nothing here is ever multi-line, and what a client chooses is logged clipped
 * (`loggedPath`, `loggedMethod`): log services trim long entries, and every field after it would
 * go.
 */

export type Level = "debug" | "info" | "warn" | "error";

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }));
}

/**
 * The most of a request's path a line carries: longer than any path of ours, far shorter than the
 * 2 KB a log service (Deno Deploy Classic) keeps of a line, where a client's path of tens of
 * kilobytes pushed the status, the request id and the error out of it.
 */
const MAX_LOGGED_PATH = 1024;

/** `path` for a log line: its first `MAX_LOGGED_PATH` characters, and how long it was if longer. */
export function loggedPath(path: string): string {
  return clipped(path, MAX_LOGGED_PATH);
}

/** A request header's value (or query) for telemetry: clipped as a path is, for the same reason. */
export function loggedHeader(value: string): string {
  return clipped(value, MAX_LOGGED_PATH);
}

/**
 * The most of a request's method a line carries: every method in HTTP's registry fits. A method is
 * any token a client sends, tens of kilobytes long if it likes.
 */
const MAX_LOGGED_METHOD = 32;

/**
 * A request's method for a log line (or a Sentry tag): clipped past 32 characters, its length said.
 */
export function loggedMethod(method: string): string {
  return clipped(method, MAX_LOGGED_METHOD);
}

function clipped(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\u2026 (${text.length} characters)`;
}
