/**
 * @module
 * Maps a browser stack's bundle positions (`http://host/_app/Counter-X.js:56:9`) to the sources
 * (`islands/Counter.tsx:29:9`) with the source maps the dev build holds in memory
 * (`@jridgewell/trace-mapping`, one decoded map per URL: every URL names one content), then keeps
 * the app's own frames (`errors/frames.ts`). The browser posts its stacks here
 * (`client/dev/errors.ts`). A stack is the client's text: frames are found in one pass over it
 * (`replaceFrames`), as no regular expression with an optional host before `/_app/` could - that
 * one tried every starting position against the rest of the line, quadratic in a long one.
 */
import { originalPositionFor, TraceMap } from "@jridgewell/trace-mapping";
import { join, relative, resolve, sep } from "node:path";
import { appStack } from "../errors/frames.ts";

const APP = "/_app/";
/** After a frame's path: an optional query, then `:line:column`. Anchored where it is tried. */
const TAIL = /(?:\?[^\s):]*)?:(\d+):(\d+)/y;

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
    const mapped = replaceFrames(stack, (frame, path, line, column) => {
      const map = mapOf(path);
      if (!map) return frame;
      const position = originalPositionFor(map, { line, column: column - 1 });
      if (position.source === null || position.line === null) return frame;
      // Sources are relative to the map's own folder.
      const folder = join(root, outDir, path.slice(APP.length), "..");
      const source = relative(root, resolve(folder, position.source)).split(sep).join("/");
      return `${source}:${position.line}:${position.column + 1}`;
    });
    return appStack(mapped);
  };
}

/** A character that ends a frame's path (`[^\s):?#]`), or its host going back (`[^/\s)]`). */
const isPathEnd = (char: string) => /[\s):?#]/.test(char);
const isHostEnd = (char: string) => /[\s)/]/.test(char);

/**
 * Replaces each frame `[http(s)://host]/_app/path[?query]:line:column` of `text` with what
 * `replace` returns for it. Linear: each search resumes past the frame it found, or past where a
 * failed one's path and query ended - any `/_app/` inside them shares that end, so fails alike -
 * and a host is read back only to the `/` before it, which no earlier search went past.
 */
export function replaceFrames(
  text: string,
  replace: (frame: string, path: string, line: number, column: number) => string,
): string {
  let out = "";
  let copied = 0;
  for (let from = 0; (from = text.indexOf(APP, from)) >= 0;) {
    const start = from;
    let end = start + APP.length;
    while (end < text.length && !isPathEnd(text[end])) end++;
    TAIL.lastIndex = end;
    const tail = end > start + APP.length ? TAIL.exec(text) : null;
    if (!tail) {
      from = end + 1;
      // A query follows only a path: after an empty one, the next `/_app/` may start a frame.
      if (text[end] === "?" && end > start + APP.length) {
        while (from < text.length && !/[\s):]/.test(text[from])) from++;
      }
      continue;
    }
    let host = start;
    while (host > copied && !isHostEnd(text[host - 1])) host--;
    const scheme = /https?:\/\/$/.exec(text.slice(Math.max(copied, host - 8), host))?.[0];
    const frameStart = scheme && host < start ? host - scheme.length : start;
    out += text.slice(copied, frameStart) +
      replace(
        text.slice(frameStart, TAIL.lastIndex),
        text.slice(start, end),
        Number(tail[1]),
        Number(tail[2]),
      );
    copied = from = TAIL.lastIndex;
  }
  return out + text.slice(copied);
}
