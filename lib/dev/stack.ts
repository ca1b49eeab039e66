/**
 * @module
 * Maps a browser stack's bundle positions (`http://host/_app/Counter-X.js:56:9`) to the sources
 * (`islands/Counter.tsx:29:9`) with the source maps the dev build holds in memory
 * (`@jridgewell/trace-mapping`, one decoded map per URL: every URL names one content), then keeps
 * the app's own frames (`errors/frames.ts`). The browser posts its stacks here
 * (`client/dev/source_stack.ts`).
 */
import { originalPositionFor, TraceMap } from "@jridgewell/trace-mapping";
import { join, relative, resolve, sep } from "node:path";
import { appStack } from "../errors/frames.ts";

const FRAME = /(?:https?:\/\/[^/\s)]+)?(\/_app\/[^\s):?#]+)(?:\?[^\s):]*)?:(\d+):(\d+)/g;

/** `files`: the build's outputs by URL path; `outDir`: where `/_app/` is, relative to `root`. */
export function stackMapper(
  root: string,
  outDir: string,
  files: Map<string, Uint8Array>,
): (stack: string) => string {
  const maps = new Map<string, TraceMap>();
  const decoder = new TextDecoder();
  const mapOf = (path: string) => {
    let map = maps.get(path);
    const text = map ? undefined : files.get(`${path}.map`);
    if (text) maps.set(path, map = new TraceMap(decoder.decode(text)));
    return map;
  };
  return (stack) => {
    const mapped = stack.replace(FRAME, (frame, path: string, line: string, column: string) => {
      const map = mapOf(path);
      if (!map) return frame;
      const position = originalPositionFor(map, { line: Number(line), column: Number(column) - 1 });
      if (position.source === null || position.line === null) return frame;
      // Sources are relative to the map's own folder.
      const folder = join(root, outDir, path.slice("/_app/".length), "..");
      const source = relative(root, resolve(folder, position.source)).split(sep).join("/");
      return `${source}:${position.line}:${position.column + 1}`;
    });
    return appStack(mapped);
  };
}
