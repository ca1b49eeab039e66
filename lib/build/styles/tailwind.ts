/**
 * @module
 * Tailwind CSS v4, in the build's own process (`@tailwindcss/node`'s compiler and
 * `@tailwindcss/oxide`'s scanner, no second process): a stylesheet that imports `tailwindcss` is
 * compiled with the class names found in every module the app's pages reach - the build's module
 * graph, not a guess from the folders (`plan.ts`) - plus the files its own `@source` rules name.
 * The result is plain CSS with a source map, which the stylesheet build then bundles and minifies
 * like any other (`bundle.ts`).
 */
import { compile, toSourceMap } from "@tailwindcss/node";
import { Scanner } from "@tailwindcss/oxide";
import { readFileSync } from "node:fs";
import { dirname, extname, join, relative, sep } from "node:path";
import { BuildProblem } from "../problem.ts";

/** Its first rules import Tailwind: `@import "tailwindcss";`, or its parts (`tailwindcss/...`). */
const TAILWIND =
  /^(?:\s|\/\*[^]*?\*\/|@layer[^;{]*;|@charset[^;]*;|@import[^;]*;)*?@import\s+(?:url\(\s*)?["']tailwindcss(?:\/[^"']*)?["']/;

export function isTailwind(css: string): boolean {
  return TAILWIND.test(css);
}

export interface Compiled {
  code: string;
  /** JSON, its sources relative to the stylesheet's folder. */
  map: string;
  /** Every file the result depends on beyond the stylesheet, by path from the root. */
  dependencies: string[];
}

export interface Tailwind {
  /**
   * Compiles the stylesheet `sheet` (path from the root, its text `css`) with the class names of
   * `scanned` (paths from the root).
   */
  compile(sheet: string, css: string, scanned: string[]): Promise<Compiled>;
}

type Compiler = Awaited<ReturnType<typeof compile>>;

interface Kept {
  css: string;
  compiler: Compiler;
  /** What the compiler read beyond the stylesheet, with what it read. */
  read: Map<string, string | undefined>;
  last?: { candidates: string; result: Compiled };
}

/**
 * A compiler per stylesheet, kept while the stylesheet and what it imports stay as they are: a dev
 * rebuild pays only for new class names (a kept compiler adds them to those it has, as
 * Tailwind's own dev servers do; a production build starts afresh).
 */
export function tailwind(root: string): Tailwind {
  const kept = new Map<string, Kept>();
  return {
    async compile(sheet, css, scanned) {
      const from = join(root, sheet);
      let entry = kept.get(sheet);
      if (!entry || entry.css !== css || [...entry.read].some(([f, text]) => readOr(f) !== text)) {
        const read = new Map<string, string | undefined>();
        try {
          const compiler = await compile(css, {
            base: dirname(from),
            from,
            onDependency: (path) => read.set(path, readOr(path)),
            shouldRewriteUrls: true,
          });
          entry = { css, compiler, read };
        } catch (error) {
          throw new BuildProblem(`${sheet}: ${(error as Error).message}`);
        }
        kept.set(sheet, entry);
      }
      const { compiler } = entry;
      const sources = [...compiler.sources];
      if (compiler.root && compiler.root !== "none") {
        sources.push({ ...compiler.root, negated: false });
      }
      const scanner = new Scanner({ sources });
      const candidates = new Set(sources.length > 0 ? scanner.scan() : []);
      // By content: the scanner reads a file itself only where a `@source` glob covers it.
      const files = scanned.flatMap((file) => {
        const content = readOr(join(root, file));
        return content === undefined ? [] : [{ content, extension: extOf(file) }];
      });
      for (const candidate of scanner.scanFiles(files)) candidates.add(candidate);
      const key = [...candidates].sort().join(" ");
      if (entry.last?.candidates === key) return entry.last.result;
      const code = compiler.build([...candidates]);
      const map = JSON.parse(toSourceMap(compiler.buildSourceMap()).raw);
      map.sources = map.sources.map((source: string) => relative(dirname(from), source));
      const dependencies = [...entry.read.keys(), ...sources.length > 0 ? scanner.files : []];
      const result = {
        code,
        map: JSON.stringify(map),
        dependencies: dependencies.map((path) => relative(root, path).split(sep).join("/")),
      };
      entry.last = { candidates: key, result };
      return result;
    },
  };
}

function readOr(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function extOf(file: string): string {
  return extname(file).slice(1) || "txt";
}
