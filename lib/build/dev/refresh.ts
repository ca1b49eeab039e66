/**
 * @module
 * Dev only: React Fast Refresh for esbuild. An `onLoad` plugin runs Babel with
 * `react-refresh/babel` on the app's own `.tsx`/`.jsx` files (never node_modules), leaving
 * TypeScript and JSX to esbuild, and appends a footer that
 *   - scopes `$RefreshReg$`/`$RefreshSig$` to the file (ids are "<file> <component>"),
 *   - hands the module's own namespace (a self-import) to the runtime once it has evaluated, so the
 *     browser can tell whether the file can be swapped in place (`client/dev/refresh_setup.ts`).
 * Babel's source map goes inline; esbuild composes it with its own, so stacks map to the lines
 * as written. The footer only appends: no line moves, and function declarations are hoisted, so
 * Babel's `var _s = $RefreshSig$()` at the top already sees them.
 *
 * esbuild's `rebuild()` calls every `onLoad` again, changed file or not: results are kept by the
 * source's hash, so a save costs one Babel run, and on disk (`cacheFile`), so that the next
 * session's first build needs no Babel at all unless a file changed meanwhile - Babel, slow to
 * load, is loaded (and run once) when the first start is done (`prepare`), for the first save.
 *
 * A save that brings a file back to a source the session built before (an undo) would bring its
 * chunk back to a content-hashed URL the open pages have loaded already, and a browser evaluates a
 * module URL once: the island would not run again, and the page would reload for want of a fresh
 * evaluation. Such a return gets a revision number in its footer, so its output, and the URL of
 * every chunk that holds or imports it, is new.
 */
import type * as esbuild from "esbuild";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { basename, join, relative, sep } from "node:path";

interface Cache {
  /** The transform's own source and the locked package versions: another key, another cache. */
  key: string;
  /** Path from the root -> its source's hash and what the transform made of it. */
  files: Record<string, { hash: string; code: string; map: string }>;
}

export interface ReactRefresh {
  plugin: esbuild.Plugin;
  /** Loads Babel now, not at the first file that needs it. */
  prepare(): void;
}

export function reactRefresh(root: string, cacheFile: string): ReactRefresh {
  const key = hash(readFileSync(new URL(import.meta.url)), lockFile(root));
  const cache = readCache(cacheFile, key);
  let changed = false;
  let babel: ReturnType<typeof loadBabel> | undefined;
  /** Each file's sources this session built, by hash; the last one's with its revision. */
  const built = new Map<string, Set<string>>();
  const last = new Map<string, { hash: string; revision: number }>();
  let revisions = 0;
  const revisionOf = (file: string, sourceHash: string) => {
    const before = last.get(file);
    if (before?.hash === sourceHash) return before.revision;
    const seen = built.get(file) ?? built.set(file, new Set()).get(file)!;
    const revision = seen.has(sourceHash) ? ++revisions : 0;
    seen.add(sourceHash);
    last.set(file, { hash: sourceHash, revision });
    return revision;
  };
  const plugin: esbuild.Plugin = {
    name: "react-refresh",
    setup(build) {
      build.onLoad({ filter: /\.[jt]sx$/ }, async ({ path }) => {
        if (path.includes(`${sep}node_modules${sep}`)) return undefined;
        const source = await Deno.readTextFile(path);
        const loader = path.endsWith(".jsx") ? "jsx" : "tsx";
        const file = relative(root, path).split(sep).join("/");
        const sourceHash = hash(source);
        let cached = cache.files[file];
        if (cached?.hash !== sourceHash) {
          let result;
          try {
            result = await transform(await (babel ??= loadBabel()), source, path);
          } catch {
            // A syntax error: esbuild reports it in its own words, with file, line and code frame.
            return { contents: source, loader };
          }
          cached = cache.files[file] = {
            hash: sourceHash,
            code: result.code,
            map: inlineMap(result.map),
          };
          changed = true;
        }
        const revision = revisionOf(file, sourceHash);
        return { contents: cached.code + footer(file, path, revision) + cached.map, loader };
      });
      build.onEnd(() => {
        if (!changed) return;
        changed = false;
        writeCache(cacheFile, cache).catch((error) => console.error("dev:", error));
      });
    },
  };
  return {
    plugin,
    prepare() {
      babel ??= loadBabel();
    },
  };
}

async function loadBabel() {
  const [core, plugin] = await Promise.all([
    import("@babel/core"),
    import("react-refresh/babel"),
  ]);
  const babel = { core, plugin: plugin.default };
  // A first transform runs several times slower than the next ones: not on the first save.
  await transform(babel, "export default () => <p>{useState(0)[0]}</p>;", "warm-up.tsx");
  return babel;
}

async function transform(
  { core, plugin }: Awaited<ReturnType<typeof loadBabel>>,
  source: string,
  path: string,
) {
  const result = await core.transformAsync(source, {
    filename: path,
    babelrc: false,
    configFile: false,
    sourceMaps: true,
    parserOpts: { plugins: ["typescript", "jsx"] },
    // Lines stay where they were, so positions hold even where the map is coarse.
    generatorOpts: { retainLines: true },
    plugins: [[plugin, { skipEnvCheck: true }]],
  });
  return { code: result!.code!, map: result!.map };
}

/**
 * esbuild's messages pointed back at the sources as written: about a file Babel transformed, they
 * quote the transformed line (`var _s = $RefreshSig$();import ...`) at its columns. Babel keeps the
 * lines (`retainLines`), so the message's line of the source is the same, and the quoted part is
 * found in it again.
 */
export function atSources(root: string, messages: esbuild.Message[]): esbuild.Message[] {
  return messages.map((message) => {
    const location = message.location;
    if (!location) return message;
    let line: string | undefined;
    try {
      line = readFileSync(join(root, location.file), "utf8").split("\n")[location.line - 1];
    } catch {
      return message; // not a file of the project
    }
    if (line === undefined || line === location.lineText) return message;
    const quoted = location.lineText.slice(location.column, location.column + location.length);
    const column = quoted ? line.indexOf(quoted) : -1;
    return {
      ...message,
      location: { ...location, lineText: line, column: column >= 0 ? column : 0 },
    };
  });
}

/** `revision`, when not 0, makes the output differ from the same source's earlier one. */
function footer(file: string, path: string, revision: number): string {
  const id = JSON.stringify(file);
  return `
import * as __refresh_self__ from ${JSON.stringify(`./${basename(path)}`)};
function $RefreshReg$(type, name) { __REFRESH__.register(type, ${id} + " " + name); }
function $RefreshSig$() { return __REFRESH__.sig(${id}); }
__REFRESH__.evaluated(${id}, __refresh_self__${revision ? `, ${revision}` : ""});
`;
}

function inlineMap(map: unknown): string {
  if (!map) return "";
  const base64 = Buffer.from(JSON.stringify(map)).toString("base64");
  return `//# sourceMappingURL=data:application/json;base64,${base64}\n`;
}

function hash(...parts: (string | Uint8Array)[]): string {
  const digest = createHash("sha256");
  for (const part of parts) digest.update(part);
  return digest.digest("base64url");
}

/** The locked package versions (Babel's, react-refresh's), if the project locks them. */
function lockFile(root: string): Uint8Array {
  try {
    return readFileSync(join(root, "deno.lock"));
  } catch {
    return new Uint8Array();
  }
}

function readCache(file: string, key: string): Cache {
  try {
    const cache: Cache = JSON.parse(readFileSync(file, "utf8"));
    if (cache.key === key) return cache;
  } catch {
    // None yet, or unreadable: start afresh.
  }
  return { key, files: {} };
}

/** Whole or not at all: the next session may read it while this one writes. */
async function writeCache(file: string, cache: Cache): Promise<void> {
  await writeFile(`${file}.tmp`, JSON.stringify(cache));
  await rename(`${file}.tmp`, file);
}
