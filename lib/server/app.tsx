/**
 * @module
 * The application: one Hono app built from the manifest at start-up. A request flows one way —
 * request id and security headers, static files, the route (middleware, handler, page), and
 * the not-found page or the failure screen when that is how it ends.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { requestId } from "hono/request-id";
import { join } from "node:path";
import { formStateHead, formStateOf, mountActions } from "./actions/mod.ts";
import { dev, root } from "./config.ts";
import { withLiveReload } from "./dev/app.tsx";
import {
  boundaryFailure,
  catchThrownValues,
  failureResponse,
  surviveUnhandledRejections,
} from "./failure.ts";
import { withHonestHead } from "./head.ts";
import { registerIsland } from "./islands.tsx";
import type { Manifest, ManifestRoute } from "./manifest.ts";
import { isNotFound, markNotFoundRoute } from "./not_found.ts";
import { renderPage } from "./render.tsx";
import { rejectInvalidUrls } from "./request_guard.ts";
import { requestLog, requestLogging } from "./request_log.ts";
import { sentry } from "./sentry/mod.ts";
import { middlewaresOf, registerRoutes, type RequestScope, runMiddlewares } from "./router.ts";
import { nonceOf, securityHeaders } from "./security.ts";
import { staticFiles } from "./static.ts";
import type { PageProps, RenderInit } from "./types.ts";

export interface Server {
  /** `info` (from `Deno.serve`) reaches handlers as Hono's `c.env`. */
  fetch(req: Request, info?: Deno.ServeHandlerInfo): Response | Promise<Response>;
}

/** `requestId()` sets its header before the handler runs; a page's own Response would drop it. */
const exposeRequestId: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set("X-Request-Id", c.get("requestId"));
};

export function createServer(manifest: Manifest): Server {
  for (const island of manifest.islands) registerIsland(island.name, island.module.default);

  const app = new Hono();
  app.use(requestId());
  app.use(exposeRequestId);
  if (requestLogging) app.use(requestLog);
  app.use(securityHeaders);
  app.use(catchThrownValues);
  app.use(staticFiles(
    { dir: join(root, manifest.assetDir), prefix: "/_app", immutable: true, precompressed: true },
    { dir: join(root, "static"), prefix: "", immutable: false },
  ));
  const devScript = dev ? withLiveReload(app) : undefined;
  sentry?.install(app);
  mountActions(app, manifest.actions);

  const renderRoute = (
    c: Context,
    route: ManifestRoute,
    scope: RequestScope,
    data: unknown,
    init?: RenderInit,
  ) => {
    const page = route.module.default;
    if (!page) throw new Error(`routes/${route.file} has no default export to render`);
    return render(c, { app: manifest.app, layouts: route.layouts, page }, scope, data, init);
  };
  registerRoutes(app, manifest.routes, renderRoute);

  const notFoundPage = manifest.notFound?.default ?? DefaultNotFound;
  const rootMiddlewares = manifest.rootMiddlewares.flatMap(middlewaresOf);
  const renderNotFound = (c: Context) => {
    markNotFoundRoute(c);
    const scope = { params: {}, url: new URL(c.req.url), state: {} };
    const tree = { app: manifest.app, layouts: manifest.rootLayouts, page: notFoundPage };
    return runMiddlewares(
      c.req.raw,
      scope,
      rootMiddlewares,
      () => render(c, tree, scope, undefined, { status: 404 }),
    ).catch((error) => failureResponse(c, error));
  };

  const render = (
    c: Context,
    tree: Parameters<typeof renderPage>[0],
    scope: RequestScope,
    data: unknown,
    init?: RenderInit,
  ) => {
    const props: PageProps<unknown> = { ...scope, data };
    const formState = formStateOf(c);
    const nonce = nonceOf(c);
    return renderPage(tree, {
      context: { nonce, assets: manifest.assets },
      head: (
        <>
          {devScript?.(nonce)}
          {sentry?.head(c)}
          {formStateHead(formState)}
        </>
      ),
      formState,
      props,
      status: init?.status ?? 200,
      headers: init?.headers,
      signal: c.req.raw.signal,
      deadline: c.get("deadline"),
      onStreamError: (error) => boundaryFailure(c, error),
    });
  };

  app.notFound(renderNotFound);
  app.onError((error, c) => isNotFound(error) ? renderNotFound(c) : failureResponse(c, error));
  surviveUnhandledRejections();
  return { fetch: rejectInvalidUrls(withHonestHead(app.fetch)) };
}

function DefaultNotFound() {
  return (
    <main>
      <title>Not found</title>
      <h1>404 — this page could not be found</h1>
    </main>
  );
}
