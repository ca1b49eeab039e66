/**
 * @module
 * The build's warning for server actions less guarded than the pages that call them. An action
 * answers to the `_middleware.ts` chain of the folder its module sits in, not to that of the page
 * whose form or island calls it: an actions module beside a guarded folder (`routes/_desk/` for the
 * pages of `routes/desk/`, behind `requireRole("clerk")`) runs without the guard, and anyone may
 * call it. A warning, not a refusal: a middleware that guards nothing (a language, a header) may be
 * absent from an action on purpose. And the warning for an actions module inside a dynamic folder
 * (`routes/c/[clinic]/`): its middleware runs for the actions too, but an action's URL
 * (`/_action/:id`) has none of the page's params, so a guard reading `c.req.param("clinic")` gets
 * `undefined` there - a failure on every call, or a check of nothing. Beside such a folder, where
 * the docs put those actions (each checking the param it takes), nothing is said: no place would
 * give them that folder's guard, and a warning that the right code cannot silence teaches to
 * ignore warnings.
 */
import type { ActionModule } from "./actions.ts";
import type { LocalImport } from "./graph.ts";
import type { Scan } from "./scan.ts";

/**
 * One line per action module whose every calling page (itself or its layouts importing it) sits
 * behind a `_middleware.ts` the module's own folders lack, naming the module, the pages, the
 * missing middleware and where to move it.
 */
export function lessGuardedActions(
  found: Scan,
  actions: readonly ActionModule[],
  imports: ReadonlyMap<string, readonly LocalImport[]>,
): string[] {
  if (actions.length === 0) return [];
  const reachedFrom = (starts: string[]) => {
    const seen = new Set<string>();
    const stack = starts;
    while (stack.length > 0) {
      const file = stack.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const { path } of imports.get(file) ?? []) if (path) stack.push(path);
    }
    return seen;
  };
  // A page calls what its layouts render too: a guarded folder's toolbar island in its layout.
  const pages = found.routes.map((route) => ({
    file: `routes/${route.file}`,
    middlewares: route.middlewares,
    reaches: reachedFrom([route.file, ...route.layouts].map((file) => `routes/${file}`)),
  }));
  const warnings: string[] = [];
  for (const { file } of actions) {
    const own = new Set(found.middlewaresFor(file));
    const callers = pages.filter((page) => page.reaches.has(file));
    if (callers.length === 0) continue;
    // The middleware every calling page has and the action has not - but a dynamic folder's,
    // which could not guard an action anyway (an action's URL has none of its params): actions
    // kept beside it check in each action, as docs/actions.md says, and no warning can see that.
    const missing = callers
      .map((page) => page.middlewares.filter((m) => !own.has(m) && paramsOf(m).length === 0))
      .reduce((common, next) => common.filter((m) => next.includes(m)));
    if (missing.length === 0) continue;
    const folder = missing[missing.length - 1].replace(/\/?_middleware\.[jt]sx?$/, "");
    warnings.push(
      `${file}: its actions run behind ${
        own.size ? `${[...own].map((m) => `routes/${m}`).join(", ")} only` : "no _middleware.ts"
      }, while every page that calls them (${
        callers.map((page) => page.file).join(", ")
      }) is behind ${missing.map((m) => `routes/${m}`).join(", ")}${
        own.size ? " too" : ""
      }. An action answers to ` +
        `the middleware of its own folder, not the page's: move the module into routes/${folder}/ ` +
        `(routes/${folder}/_actions.ts), or check in each action (docs/actions.md, ` +
        `"Behind middleware").`,
    );
  }
  return warnings;
}

/**
 * One line per action module whose `_middleware.ts` chain has a middleware in a dynamic folder
 * (`[clinic]`, `[...path]`): on a page it reads the URL's params; on an action's call
 * (`/_action/:id`) there are none, and the line says what to do instead.
 */
export function paramlessGuards(found: Scan, actions: readonly ActionModule[]): string[] {
  const warnings: string[] = [];
  for (const { file } of actions) {
    const dynamic = found.middlewaresFor(file).filter((m) => paramsOf(m).length > 0);
    if (dynamic.length === 0) continue;
    const params = [...new Set(dynamic.flatMap(paramsOf))];
    const [segment] = dynamic[0].match(DYNAMIC)!; // as the folder is named: [clinic], [...path]
    const names = params.join(", ");
    warnings.push(
      `${file}: its actions run behind ${
        dynamic.map((m) => `routes/${m}`).join(", ")
      }, in a dynamic folder, where an action's call has no ${names}: its URL is /_action/:id, ` +
        `not the page's, so c.req.param() there is undefined (${
          params.map((p) => `c.req.param("${p}")`).join(", ")
        }). Put the module in a folder without ${segment} (beside a static guard such as ` +
        `requireUser()), take ${names} as an argument and check in each action ` +
        `(docs/actions.md, "Actions of a [param] folder").`,
    );
  }
  return warnings;
}

/** A `[name]` or `[...name]` segment. */
const DYNAMIC = /\[(?:\.\.\.)?([^\]]+)\]/g;

/** The params a path's `[name]` and `[...name]` segments declare, in order. */
function paramsOf(path: string): string[] {
  return [...path.matchAll(DYNAMIC)].map((match) => match[1]);
}
