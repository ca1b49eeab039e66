/**
 * @module
 * CSS modules (`x.module.css`), scoped with Lightning CSS: each class, `@keyframes` and grid name
 * becomes `name_hash`, the hash taken from the file's path from the project root - the same name
 * in development and production, on every machine, whatever else the app holds, so the server's
 * class map (`deno_json.ts`), the islands' and the stylesheet always agree, and two files' `.card`
 * never meet. `composes: a from "./other.module.css"` names the other file's class and makes the
 * other file a stylesheet of this one's (`dependencies`). Results are kept by content: a dev
 * rebuild transforms only what changed.
 */
import { transform } from "lightningcss";
import { readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { BuildProblem } from "../problem.ts";

/** A CSS module as the build uses it. */
export interface CssModule {
  /** The scoped CSS, and its source map (JSON). */
  code: string;
  map: string;
  /** Each name as written -> the class names it stands for (`"big_x card_x"` with `composes`). */
  classes: Record<string, string>;
  /** The CSS modules it composes from, by path from the root. */
  dependencies: string[];
}

export interface CssModules {
  /** The module at `sheet` (path from the root), scoped. Throws a `BuildProblem` for bad CSS. */
  get(sheet: string): CssModule;
}

const PATTERN = "[local]_[hash]";

export function isCssModule(sheet: string): boolean {
  return /\.module\.css$/i.test(sheet);
}

export function cssModules(root: string): CssModules {
  const cache = new Map<string, { source: string; module: CssModule }>();
  const building = new Set<string>();
  const get = (sheet: string): CssModule => {
    const source = readSource(root, sheet);
    const kept = cache.get(sheet);
    if (kept?.source === source && kept.module.dependencies.every(unchanged)) return kept.module;
    if (building.has(sheet)) throw new BuildProblem(`${sheet}: composes from itself, in a cycle`);
    building.add(sheet);
    try {
      const module = scoped(sheet, source, get);
      cache.set(sheet, { source, module });
      return module;
    } finally {
      building.delete(sheet);
    }
  };
  /** A dependency whose classes are the ones recorded (checked through `get`, which caches). */
  const unchanged = (sheet: string) => cache.get(sheet)?.module === get(sheet);
  return { get };
}

function readSource(root: string, sheet: string): string {
  try {
    return readFileSync(join(root, sheet), "utf8");
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
    throw new BuildProblem(`${sheet}: Module not found`);
  }
}

function scoped(sheet: string, source: string, get: (sheet: string) => CssModule): CssModule {
  let result;
  try {
    result = transform({
      filename: sheet,
      code: new TextEncoder().encode(source),
      cssModules: { pattern: PATTERN, dashedIdents: false },
      sourceMap: true,
      // As a browser does: a rule it cannot parse is dropped, not the stylesheet.
      errorRecovery: true,
    });
  } catch (error) {
    const { loc, message } = error as { loc?: { line: number; column: number }; message: string };
    throw new BuildProblem(`${sheet}${loc ? `:${loc.line}:${loc.column}` : ""}: ${message}`);
  }
  const dependencies = new Set<string>();
  const classes: Record<string, string> = {};
  // Sorted: Lightning CSS gives them in no stable order, and a rebuild must compare equal.
  const exports = Object.entries(result.exports ?? {}).sort(([a], [b]) => a < b ? -1 : 1);
  for (const [name, exported] of exports) {
    const names = [exported.name];
    for (const reference of exported.composes) {
      if (reference.type !== "dependency") {
        names.push(reference.name);
        continue;
      }
      const other = posix.normalize(posix.join(dirname(sheet), reference.specifier));
      if (!isCssModule(other) || other.startsWith("../")) {
        throw new BuildProblem(
          `${sheet}: composes from ${
            JSON.stringify(reference.specifier)
          }: not a CSS module of the project`,
        );
      }
      const composed = get(other).classes[reference.name];
      if (composed === undefined) {
        throw new BuildProblem(
          `${sheet}: composes ${reference.name} from ${reference.specifier}: no such class there`,
        );
      }
      dependencies.add(other);
      names.push(composed);
    }
    classes[name] = names.join(" ");
  }
  // Its source as esbuild reads an inline map's: relative to the stylesheet's folder.
  const map = JSON.parse(new TextDecoder().decode(result.map ?? new Uint8Array()));
  map.sources = [posix.basename(sheet)];
  return {
    code: new TextDecoder().decode(result.code),
    map: JSON.stringify(map),
    classes,
    dependencies: [...dependencies],
  };
}
