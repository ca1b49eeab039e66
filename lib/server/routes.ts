/**
 * @module
 * The routes of the manifest on Hono's router. Each is its folders' `_middleware` chain (Hono
 * middleware, outermost folder first), then the handler for the request's method, or the page for
 * GET/HEAD when there is no handler. A method with nothing to answer it gets 405 with `Allow`. The
 * manifest lists routes most specific first, and the first route to answer wins.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { type ManifestRoute, middlewaresOf } from "./manifest.ts";
import { CONTEXT } from "./scope.ts";
import { type Telemetry, tracedMiddleware } from "./telemetry.ts";
import type { AnyParams, Handler, PageResponse, RenderInit, RouteContext, State } from "./types.ts";
import { internalsOf } from "./internals.ts";

declare module "./internals.ts" {
  interface Internals {
    /** The route answering the request, as it reads in logs and traces: `/blog/:slug`. */
    route: string;
    /** The same route's manifest entry: its error page answers the request's expected errors. */
    routeEntry: ManifestRoute;
  }
}

/** Renders a route's page with `data` for the request `c`, whose route params are `params`. */
export type PageRenderer = (
  c: Context,
  route: ManifestRoute,
  params: AnyParams,
  data: unknown,
  init?: RenderInit,
) => Promise<Response>;

/** Puts something around a route's dispatch, after its middleware (the page cache). */
export type AroundDispatch = (route: ManifestRoute, dispatch: Dispatch) => Dispatch;

export function registerRoutes(
  app: Hono,
  routes: ManifestRoute[],
  render: PageRenderer,
  telemetry?: Telemetry,
  around: AroundDispatch = (_route, dispatch) => dispatch,
): void {
  for (const route of routes) {
    const chain = tracedMiddleware(route.middlewares.flatMap(middlewaresOf), telemetry);
    const dispatch = around(route, dispatcher(route, render));
    // With no middleware of the team's, naming the route is the dispatch's first step, not a hop.
    if (chain.length) app.all(route.pattern, named(route), ...chain, dispatch);
    else app.all(route.pattern, (c) => dispatch(nameRoute(c, route)));
  }
}

function nameRoute(c: Context, entry: ManifestRoute): Context {
  const internals = internalsOf(c);
  internals.route = entry.name;
  internals.routeEntry = entry;
  return c;
}

function named(entry: ManifestRoute): MiddlewareHandler {
  return function route(c, next) {
    nameRoute(c, entry);
    return next();
  };
}

export type Dispatch = (c: Context) => Promise<Response>;

function dispatcher(route: ManifestRoute, render: PageRenderer): Dispatch {
  const { handler, default: page } = route.module;
  // A pattern without `:` has no params: Hono's decoding of none is skipped (a request's garbage).
  const paramsOf = route.pattern.includes(":") ? (c: Context) => c.req.param() : () => ({});
  if (typeof handler === "function") {
    return async (c) => {
      const scope = new Scope(c, route, render, paramsOf(c));
      return ownAnswer(c, scope, mutable(await handler(c.req.raw, scope)));
    };
  }
  // The module's own methods only: any token is a method to HTTP, and `handlers[method]` found
  // what every object has (`constructor`, `toString`, ...) and ran it, a 500 for anyone asking.
  const handlers = new Map<string, Handler | undefined>(Object.entries(handler ?? {}));
  const allowed = new Set(handlers.keys());
  if (page && !allowed.has("GET")) allowed.add("GET");
  if (allowed.has("GET")) allowed.add("HEAD");
  const allow = [...allowed].join(", ");
  const renderPage: Handler = (_req, ctx) => ctx.render();

  async function answer(c: Context, method: string, run: Handler): Promise<Response> {
    const scope = new Scope(c, route, render, paramsOf(c));
    const made = await run(c.req.raw, scope);
    // The page's own render made its response: no need to probe it.
    const res = run === renderPage ? made : ownAnswer(c, scope, mutable(made));
    if (method !== "HEAD") return res;
    // Stop the render behind a body nobody will read (see head.ts for the response itself).
    await res.body?.cancel();
    return new Response(null, res);
  }

  return (c) => {
    const method = c.req.method;
    const run = handlers.get(method) ??
      (method === "HEAD" ? handlers.get("GET") : undefined) ??
      (page && (method === "GET" || method === "HEAD") ? renderPage : undefined);
    if (!run) return Promise.resolve(c.text("Method Not Allowed", 405, { Allow: allow }));
    // A page's GET is its render's promise as it is: no async step of its own around it.
    if (run === renderPage && method === "GET") {
      return new Scope(c, route, render, paramsOf(c)).render();
    }
    return answer(c, method, run);
  };
}

/**
 * A response a handler made itself, not through `ctx.render`: its body may read KV after the
 * handler returned, so the request is in flight until it is sent (`frame.ts`). A page's render is
 * counted on its own (`in_flight.ts`) and pays nothing here.
 */
function ownAnswer(c: Context, scope: Scope, res: Response): Response {
  if (!scope.rendered) internalsOf(c).ownBody = true;
  return res;
}

/**
 * A handler may return any Response, one whose headers cannot change included (`Response.redirect`,
 * `fetch`'s): the security headers and the request id still have to go on it.
 */
function mutable(res: Response): Response {
  try {
    res.headers.delete("x-mutable-probe");
    return res;
  } catch {
    return new Response(res.body, res);
  }
}

/** A handler's `ctx`; the URL and state are made only when read. */
class Scope implements RouteContext<unknown, AnyParams> {
  readonly params: AnyParams;
  readonly [CONTEXT]: Context;
  #url?: URL;
  #state?: State;
  /** Whether the handler asked for its page (`render`). */
  rendered = false;

  constructor(
    private readonly c: Context,
    private readonly route: ManifestRoute,
    private readonly renderer: PageRenderer,
    params: AnyParams,
  ) {
    this.params = params;
    this[CONTEXT] = c;
  }

  get url(): URL {
    return this.#url ??= new URL(this.c.req.url);
  }

  /** Read once: Hono's `c.var` is a fresh copy at each read. */
  get state(): State {
    return this.#state ??= this.c.var as State;
  }

  render(data?: unknown, init?: RenderInit): Promise<PageResponse<unknown>> {
    this.rendered = true;
    return this.renderer(this.c, this.route, this.params, data, init);
  }
}
