/**
 * @module
 * File-system route conventions: turns a path under `routes/` into a URL pattern for Hono's
 * router and orders routes so the most specific wins. Pure functions, run by the build.
 */
import { BuildProblem } from "./problem.ts";

const ROUTE_FILE = /\.(tsx|ts|jsx|js)$/;
const GROUP = /^\(.+\)$/;
const PARAM = /^\[([A-Za-z_$][\w$]*)\]$/;
const CATCH_ALL = /^\[\.\.\.([A-Za-z_$][\w$]*)\]$/;
const STATIC = /^[\w\-.~@!$&'()+,;=]+$/;

export type SpecialFile =
  | "_app"
  | "_layout"
  | "_middleware"
  | "_404"
  | "_error"
  | "_settings"
  | "_jobs"
  | "_roles";

const SPECIAL = new Set<string>([
  "_app",
  "_layout",
  "_middleware",
  "_404",
  "_error",
  "_settings",
  "_jobs",
  "_roles",
]);

export interface RouteFile {
  /** Path relative to `routes/`, with `/` separators. */
  file: string;
  pattern: string;
}

/** The special file a path names, or undefined for an ordinary route. */
export function specialFile(file: string): SpecialFile | undefined {
  const base = file.split("/").pop()!.replace(ROUTE_FILE, "");
  return SPECIAL.has(base) ? base as SpecialFile : undefined;
}

export function isRouteFile(file: string): boolean {
  return ROUTE_FILE.test(file) && !file.split("/").some((part) => part.startsWith("_"));
}

/** `blog/[slug].tsx` -> `/blog/:slug`; `docs/[...path].tsx` -> `/docs/:path{.+}`. */
export function patternFor(file: string): string {
  const segments = file.replace(ROUTE_FILE, "").split("/").filter((s) => !GROUP.test(s));
  if (segments.at(-1) === "index") segments.pop();
  const parts = segments.map((segment, i) => {
    const catchAll = CATCH_ALL.exec(segment);
    if (catchAll) {
      if (i !== segments.length - 1) {
        throw new BuildProblem(
          `routes/${file}: a catch-all [...${catchAll[1]}] must be the last segment`,
        );
      }
      return `:${catchAll[1]}{.+}`;
    }
    const param = PARAM.exec(segment);
    if (param) return `:${param[1]}`;
    if (!STATIC.test(segment) || segment.includes("[")) {
      throw new BuildProblem(
        `routes/${file}: "${segment}" is not a valid segment; use letters, digits, -_.~ or [param]`,
      );
    }
    return segment;
  });
  return "/" + parts.join("/");
}

/** How a pattern reads in logs and traces: `/docs/:path{.+}` -> `/docs/:path+`. */
export function routeName(pattern: string): string {
  return pattern.replace(/\{\.\+\}$/, "+");
}

/**
 * The folders that an unknown URL can be in, each with the pattern of its pages' URLs
 * (`teams/[team]` -> `/teams/:team`), most specific first: those of `files` (paths below
 * `routes/`) with a `_middleware` or an `_error` of their own (`own`), and the first URL folder
 * below a `(group)` that has one (`(app)/admin` for `(app)/_middleware.ts`: its pages meet the
 * group's chain, so an unknown URL below `/admin` must too, or the chain's refusal would tell real
 * URLs from unknown ones). A `_private` folder has no URL; one that ends in a `(group)` shares its
 * parent's, and an unknown URL there is the parent's (it could be a page of any group). A URL two
 * such folders below groups share (`(a)/admin`, `(b)/admin`) is left to the folder above.
 */
export function urlFolders(files: Iterable<string>, own: ReadonlySet<string>): RouteFile[] {
  const below = new Map<string, RouteFile[]>();
  const found: RouteFile[] = [];
  for (const folder of new Set([...files].flatMap((file) => foldersOf(file)))) {
    const parts = folder.split("/");
    if (folder === "" || parts.some((part) => part.startsWith("_"))) continue;
    if (GROUP.test(parts.at(-1)!)) continue;
    const entry = { file: folder, pattern: patternFor(`${folder}/index.tsx`) };
    if (own.has(folder)) found.push(entry);
    else if (GROUP.test(parts.at(-2) ?? "") && underOwnGroup(parts, own)) {
      below.set(entry.pattern, [...below.get(entry.pattern) ?? [], entry]);
    }
  }
  const claimed = new Set(found.map(({ pattern }) => pattern));
  for (const [pattern, entries] of below) {
    if (entries.length === 1 && !claimed.has(pattern)) found.push(entries[0]);
  }
  return found.sort(compareRoutes);
}

/** Whether a `(group)` folder on the path `parts` has a `_middleware` or an `_error` of its own. */
function underOwnGroup(parts: string[], own: ReadonlySet<string>): boolean {
  return parts.some((part, i) => GROUP.test(part) && own.has(parts.slice(0, i + 1).join("/")));
}

/** The folders from `routes/` down to the file's own, each as a prefix ("" is the root). */
export function foldersOf(file: string): string[] {
  const parts = file.split("/").slice(0, -1);
  return ["", ...parts.map((_, i) => parts.slice(0, i + 1).join("/"))];
}

function rank(segment: string): number {
  if (segment.endsWith("{.+}")) return 2;
  return segment.startsWith(":") ? 1 : 0;
}

/**
 * The `_error.tsx` nearest to `file` (a path below `routes/`) up its folders, and the layouts it
 * renders inside: those of its own folder and above, outermost first. `errors` and `layouts` map a
 * folder to its file.
 */
export function nearestErrorPage<T>(
  errors: Map<string, T>,
  layouts: Map<string, T>,
  file: string,
): { module: T; layouts: T[] } | undefined {
  const folders = foldersOf(file);
  for (let i = folders.length - 1; i >= 0; i--) {
    const module = errors.get(folders[i]);
    if (module === undefined) continue;
    return { module, layouts: folders.slice(0, i + 1).flatMap((f) => layouts.get(f) ?? []) };
  }
  return undefined;
}

/** Static segments before parameters before catch-alls, compared segment by segment. */
export function compareRoutes(a: RouteFile, b: RouteFile): number {
  const as = a.pattern.split("/");
  const bs = b.pattern.split("/");
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const diff = rank(as[i]) - rank(bs[i]);
    if (diff !== 0) return diff;
  }
  if (as.length !== bs.length) {
    // A catch-all matches any depth, so the longer static prefix goes first.
    return bs.length - as.length;
  }
  return a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0;
}

/** Two files that claim one URL (`a.tsx` and `(g)/a.tsx`) are a build error. */
export function assertUniquePatterns(routes: RouteFile[]): void {
  const seen = new Map<string, string>();
  for (const route of routes) {
    const key = route.pattern.replace(/:[^/{]+/g, ":");
    const other = seen.get(key);
    if (other) {
      throw new BuildProblem(
        `routes/${other} and routes/${route.file} both match ${route.pattern}`,
      );
    }
    seen.set(key, route.file);
  }
}
