/**
 * @module
 * Tailwind CSS v4, in the build's own process (`@tailwindcss/node`'s compiler and
 * `@tailwindcss/oxide`'s scanner, no second process): a stylesheet that imports `tailwindcss` is
 * compiled with the class names found in every module the app's pages reach — the build's module
 * graph, not a guess from the folders (`plan.ts`) — plus the files its own `@source` rules name.
 * The result is plain CSS with a source map, which the stylesheet build then bundles and minifies
 * like any other (`bundle.ts`).
 */
import { compile, toSourceMap } from "@tailwindcss/node";
import { Scanner } from "@tailwindcss/oxide";
import { dirname, extname, join, relative, sep } from "node:path";
import { BuildProblem } from "../problem.ts";

/** Its first rules import Tailwind: `@import "tailwindcss";`, or its parts (`tailwindcss/…`). */
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

/**
 * Compiles the stylesheet `sheet` (path from the root, its text `css`) with the class names of
 * `scanned` (paths from the root).
 */
export async function compileTailwind(
  root: string,
  sheet: string,
  css: string,
  scanned: string[],
): Promise<Compiled> {
  const from = join(root, sheet);
  const dependencies = new Set<string>();
  let compiler;
  try {
    compiler = await compile(css, {
      base: dirname(from),
      from,
      onDependency: (path) => dependencies.add(path),
      shouldRewriteUrls: true,
    });
  } catch (error) {
    throw new BuildProblem(`${sheet}: ${(error as Error).message}`);
  }
  const sources = [...compiler.sources];
  if (compiler.root && compiler.root !== "none") sources.push({ ...compiler.root, negated: false });
  const scanner = new Scanner({ sources });
  const candidates = new Set(sources.length > 0 ? scanner.scan() : []);
  const files = scanned.map((file) => ({ file: join(root, file), extension: extOf(file) }));
  for (const candidate of scanner.scanFiles(files)) candidates.add(candidate);
  for (const file of sources.length > 0 ? scanner.files : []) dependencies.add(file);
  const code = compiler.build([...candidates]);
  const map = JSON.parse(toSourceMap(compiler.buildSourceMap()).raw);
  map.sources = map.sources.map((source: string) => relative(dirname(from), source));
  return {
    code,
    map: JSON.stringify(map),
    dependencies: [...dependencies].map((path) => relative(root, path).split(sep).join("/")),
  };
}

function extOf(file: string): string {
  return extname(file).slice(1) || "txt";
}
