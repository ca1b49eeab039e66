/**
 * @module
 * Structured logs: one JSON object per line on stdout, so Deno Deploy's log search finds a failure
 * by its digest. Nothing here is ever multi-line.
 */

export type Level = "debug" | "info" | "warn" | "error";

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }));
}
