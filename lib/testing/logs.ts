/**
 * @module
 * The app's log lines in a test: the JSON lines it writes to stdout with `console.log`
 * (`lib/server/log.ts`), collected while a capture is in `using`, and those of one request picked
 * by its `X-Request-Id`. A request's lines are written by the time its response body has been read.
 * Test-only.
 */

/**
 * One JSON line: `level`, `msg`, and whatever else was logged (`digest`, `request_id`, ...).
 *
 * @example
 * ```ts
 * import type { LogLine } from "shell/testing";
 * const failed = (line: LogLine) => line.level === "error" && typeof line.digest === "string";
 * ```
 */
// deno-lint-ignore no-explicit-any -- a log line holds whatever the app logged
export type LogLine = Record<string, any>;

/**
 * The lines captured so far, and those of one response's request.
 *
 * @example
 * ```ts
 * import { captureLogs, type Logs } from "shell/testing";
 * using logs: Logs = captureLogs();
 * ```
 */
export interface Logs extends Disposable {
  /** Every JSON line written while capturing, parsed, in order. */
  lines: LogLine[];
  /** The raw text of each, as a log service would store it. */
  raw: string[];
  /** The lines of the request `response` answered (by its `X-Request-Id`). */
  of(response: Response): LogLine[];
}

/**
 * Captures the app's JSON log lines until disposed; anything else printed passes through.
 *
 * @example A failure's line carries the digest the page shows
 * ```ts
 * import assert from "node:assert/strict";
 * import { captureLogs } from "shell/testing";
 * import type { App } from "shell/server";
 * declare const app: App;
 *
 * using logs = captureLogs();
 * const res = await app.request("/broken");
 * const page = await res.text();
 * const [line] = logs.of(res);
 * assert.equal(line.level, "error");
 * assert.ok(page.includes(line.digest));
 * ```
 */
export function captureLogs(): Logs {
  const original = console.log;
  const logs: Logs = {
    lines: [],
    raw: [],
    of: (response) => {
      const id = response.headers.get("x-request-id");
      return id === null ? [] : logs.lines.filter((line) => line.request_id === id);
    },
    [Symbol.dispose]() {
      console.log = original;
    },
  };
  console.log = (...args: unknown[]) => {
    const [text] = args;
    if (args.length === 1 && typeof text === "string" && text.startsWith("{")) {
      try {
        logs.lines.push(JSON.parse(text));
        logs.raw.push(text);
        return;
      } catch { /* not JSON: printed as usual */ }
    }
    original(...args);
  };
  return logs;
}
