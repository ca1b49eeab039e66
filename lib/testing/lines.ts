/**
 * @module
 * A server process's output as lines, for `startServer` and the framework's own test helper: each
 * line kept as it arrives, and the JSON log lines among them read back.
 */
import type { LogLine } from "./logs.ts";

/** Pushes each line of `stream` into `into` as it arrives, calling `arrived` after each chunk. */
export async function collectLines(
  stream: ReadableStream<Uint8Array>,
  into: string[],
  arrived: () => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const bytes of stream) {
    const lines = (rest + decoder.decode(bytes, { stream: true })).split("\n");
    rest = lines.pop()!;
    into.push(...lines);
    arrived();
  }
  if (rest) into.push(rest);
  arrived();
}

/** A stdout line as a log line, without the name `deno serve --parallel` puts before a worker's. */
export function jsonLine(printed: string): LogLine[] {
  const line = printed.replace(/^\[serve-worker-\d+ *\] /, "");
  if (!line.startsWith("{")) return [];
  try {
    return [JSON.parse(line)];
  } catch {
    return [];
  }
}
