/**
 * @module
 * Runs a matched route: its folders' `_middleware` chain, then the handler for the request's
 * method, or the page for GET/HEAD when there is no handler. A method with nothing to answer it
 * gets 405 with `Allow`. Matching itself is Hono's; the manifest lists routes most specific first.
 */
import type { Context, Hono } from "hono";
import { startDeadline, withinDeadline } from "./deadline.ts";
import type { ManifestRoute, MiddlewareModule } from "./manifest.ts";
import { routeName } from "./routes.ts";
import type { Handler, Handlers, Middleware, RenderInit, RouteContext, State } from "./types.ts";

declare module "hono" {
  interface ContextVariableMap {
    /** The route answering the request, as it reads in logs and traces: `/blog/:slug`. */
    route: string;
  }
}

export interface RequestScope {
  params: Record<string, string>;
  url: URL;
  state: State;
}

/** Renders a route's page with `data` under the request's scope. */
export type PageRenderer = (
  c: Context,
  route: ManifestRoute,
  scope: RequestScope,
  data: unknown,
  init?: RenderInit,
) => Promise<Response>;

export function registerRoutes(app: Hono, routes: ManifestRoute[], render: PageRenderer): void {
  for (const route of routes) {
    const dispatch = dispatcher(route, render);
    const middlewares = route.middlewares.flatMap(middlewaresOf);
    const name = routeName(route.pattern);
    app.all(route.pattern, (c) => {
      c.set("route", name);
      const scope: RequestScope = { params: c.req.param(), url: new URL(c.req.url), state: {} };
      const deadline = startDeadline();
      if (deadline) c.set("deadline", deadline);
      const response = runMiddlewares(c.req.raw, scope, middlewares, () => dispatch(c, scope));
      // Until the response (a page: its shell) is ready; what streams after has its own.
      return withinDeadline(response, deadline);
    });
  }
}

export function middlewaresOf(module: MiddlewareModule): Middleware[] {
  return Array.isArray(module.handler) ? module.handler : [module.handler];
}

export function runMiddlewares(
  req: Request,
  scope: RequestScope,
  middlewares: Middleware[],
  last: () => Promise<Response>,
): Promise<Response> {
  const run = async (i: number): Promise<Response> =>
    i === middlewares.length
      ? await last()
      : await middlewares[i](req, { ...scope, next: () => run(i + 1) });
  return run(0);
}

type Dispatch = (c: Context, scope: RequestScope) => Promise<Response>;

function dispatcher(route: ManifestRoute, render: PageRenderer): Dispatch {
  const { handler, default: page } = route.module;
  if (typeof handler === "function") {
    return async (c, scope) => await handler(c.req.raw, routeContext(c, route, scope, render));
  }
  const handlers: Handlers = handler ?? {};
  const allowed = new Set(Object.keys(handlers));
  if (page && !allowed.has("GET")) allowed.add("GET");
  if (allowed.has("GET")) allowed.add("HEAD");
  const allow = [...allowed].join(", ");
  const renderPage: Handler = (_req, ctx) => ctx.render();

  return async (c, scope) => {
    const method = c.req.method as keyof Handlers;
    const run = handlers[method] ??
      (method === "HEAD" ? handlers.GET : undefined) ??
      (page && (method === "GET" || method === "HEAD") ? renderPage : undefined);
    if (!run) {
      return c.text("Method Not Allowed", 405, { Allow: allow });
    }
    const res = await run(c.req.raw, routeContext(c, route, scope, render));
    if (method !== "HEAD") return res;
    // Stop the render behind a body nobody will read (see head.ts for the response itself).
    await res.body?.cancel();
    return new Response(null, res);
  };
}

function routeContext(
  c: Context,
  route: ManifestRoute,
  scope: RequestScope,
  render: PageRenderer,
): RouteContext<unknown> {
  return {
    ...scope,
    render: (data, init) => render(c, route, scope, data, init),
  };
}
