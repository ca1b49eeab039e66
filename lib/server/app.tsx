/**
 * @module
 * `createApp(manifest, options)`: one Hono app, built once from the manifest and typed options. A
 * request flows one way - the URL and host guard, the app's one step around it (`frame.ts`:
 * security headers and the request id, static files, the deadline and the body budget,
 * compression), telemetry, then the route (its folders' middleware, the handler, the page) or the
 * action - and ends on the page, an error page for an expected error
 * (`httpError`, `notFound()`, an unknown URL: `error_pages.tsx`), or the failure screen.
 * Nothing here touches the process: signals and unhandled rejections belong to the entry points.
 */
import { type Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { join } from "node:path";
import { claimInMemory } from "../actions/form_state.ts";
import { submissionsInMemory } from "../actions/once.ts";
import { stubFailure } from "../actions/endpoint.ts";
import {
  type ActionOptions,
  formStateHead,
  formStateOf,
  formStateRestore,
  keptInputOf,
  keptNotice,
  mountActions,
} from "../actions/mod.ts";
import { isRedirect } from "../actions/redirect.ts";
import { failures } from "../errors/failure.ts";
import { isHttpError, notFound } from "../shared/http_error.ts";
import { registerIsland } from "../islands/registry.ts";
import { keptFields } from "../jsx/kept_field.ts";
import { claimInKv } from "../kv/claim.ts";
import { submissionsInKv } from "../actions/once_kv.ts";
import { pageCache } from "../cache/page_cache.ts";
import { restoredPageCheck } from "../auth/restored.tsx";
import { kvSecret } from "../kv/secret.ts";
import { type PageTree, renderPage } from "../render/page.tsx";
import { warnOfUnbuiltModules } from "./build_sources.ts";
import { bodyRefusal, guardBody } from "./bodies.ts";
import { deadlineClock } from "./deadline.ts";
import { errorPages } from "./error_pages.tsx";
import { registerFolders } from "./folders.ts";
import { requestFrame } from "./frame.ts";
import { inFreshContext } from "./fresh_context.ts";
import { guardRequests } from "./guard.ts";
import { keepWhileRunning, keptAssets } from "./kept_assets.ts";
import { withHonestHead } from "./head.ts";
import { InFlight } from "./in_flight.ts";
import { refusalLines } from "./request_log.ts";
import { internalsOf } from "./internals.ts";
import type { Manifest, ManifestRoute } from "./manifest.ts";
import { type AppOptions, resolveOptions } from "./options.ts";
import { registerRoutes } from "./routes.ts";
import { type AppScope, withScope } from "./scope.ts";
import { listenJobs } from "../kv/jobs/listen.ts";
import { productSettings } from "../settings/declare.ts";
import { holdToDeclaredRoles } from "../auth/roles.ts";
import { checkedAuth } from "../auth/settings.ts";
import { cspAround, nonceOf } from "./security.ts";
import { speculationRules } from "./speculation.ts";
import { staticFiles } from "./static.ts";
import { MAX_TIMER_MS } from "./time_limit.ts";
import type { HonoApp, PageProps, RenderInit, State } from "./types.ts";
import { buildMeta, currentBuild } from "./versions.ts";

/**
 * What `createApp` returns: a fetch handler for a server, Hono's in-process `request` for tests,
 * and `close()` for a graceful shutdown.
 *
 * @example
 * ```ts
 * import { type App, createApp } from "shell/server";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * const app: App = createApp(manifest, { root: Deno.cwd() });
 * const res = await app.request("/about");
 * console.log(res.status);
 * await app.close();
 * ```
 * @see docs/testing.md - Your routes, in-process
 */
export interface App {
  /** For `Deno.serve`, `deno serve` and Deno Deploy; `info` reaches handlers as Hono's `c.env`. */
  fetch(req: Request, info?: Deno.ServeHandlerInfo): Response | Promise<Response>;
  /** Hono's `app.request`: a request in-process, for tests (`app.request("/about")`). */
  request: HonoApp["request"];
  /**
   * Ends the app's long-lived streams (event streams), so a shutdown need not wait, and stops the
   * page cache's background renders and the app's background jobs; resolves once those let go of
   * KV (2 s at most), after which the KV store may be closed.
   */
  close(): Promise<void>;
  /**
   * Resolves once no request is in flight: each answered, each page rendered to its end (its
   * Suspense boundaries too), and each response a handler made itself sent, when the server says
   * so (`Deno.ServeHandlerInfo.completed`: not in-process, where it counts until it is ready).
   * After `close()`, KV may then be closed under none of them.
   */
  idle(): Promise<void>;
  /**
   * For a stop that closes the KV store itself (`deno serve`, Deno Deploy: `lib/cli/stop.ts`):
   * `close()`, then resolves once no request is in flight (`idle`), and from that moment answers
   * every later request 503 with `Retry-After` and `Connection: close` (one `info` line each, ten a
   * second at most), without running it: a request that comes then would meet a closed store. The
   * store may be closed once it resolves.
   */
  stop(): Promise<void>;
  /**
   * Resolves once the app's start-up work is done - this build's assets kept in KV, with
   * `assetRetention` - so that a server starts serving only then. Never rejects.
   */
  ready: Promise<void>;
}

/**
 * The app: one Hono app built once from the build's manifest and typed options. A request goes
 * through the host guard, security headers, static files, the deadline and the body budget,
 * telemetry, then its route (its folders' middleware, the handler, the page) or server action, and
 * ends on the page, the not-found page or the failure screen. It reads no environment: the entry
 * points (`main.ts`, `lib/cli/`) read and check it once, and pass options.
 *
 * @param manifest What `deno task build` wrote (`_build/manifest.gen.ts`).
 * @param appOptions The project root, and settings.
 * @returns The app.
 *
 * @example
 * ```ts
 * // serve.ts: the app on a port of its own, without the entry points' settings
 * import { createApp } from "shell/server";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * const app = createApp(manifest, {
 *   root: import.meta.dirname!,
 *   kv: await Deno.openKv(":memory:"),
 *   requestTimeoutMs: 5_000,
 * });
 * Deno.serve({ hostname: "127.0.0.1", port: 8080 }, app.fetch);
 * ```
 * @see docs/testing.md - Your routes, in-process
 */
export function createApp(manifest: Manifest, appOptions: AppOptions): App {
  const options = resolveOptions(appOptions);
  // First: a test that forgot a required setting learns it before anything else is made.
  const settings = productSettings(manifest.settings, options.settings);
  const { dev, telemetry } = options;
  // The dev loop builds before it makes an app; elsewhere a manifest may be older than the project.
  if (!dev && manifest.sources) {
    warnOfUnbuiltModules(options.root, manifest.buildId, manifest.sources);
  }
  for (const island of manifest.islands) registerIsland(island.name, island.module.default);
  const failed = failures({ dev, root: options.root, telemetry, kv: options.kv });
  const clock = deadlineClock(options.requestTimeoutMs);
  const closing = new AbortController();
  const span = telemetry?.span?.bind(telemetry);

  const { kv, trustProxy, origins, auth } = options;
  // Resolved at a request's first ask (it needs the scheme); checked now, so that a setting KV
  // cannot keep stops the start rather than failing every request that reads the settings.
  if (auth) checkedAuth(auth);
  holdToDeclaredRoles(manifest, kv);
  const files = staticFiles(
    {
      dir: join(options.root, manifest.assetDir),
      prefix: "/_app",
      immutable: true,
      precompressed: true,
      hidden: options.serveSourceMaps ? undefined : /\.map$/,
    },
    { dir: join(options.root, "static"), prefix: "", immutable: false },
  );
  // Earlier builds' assets, for tabs opened before a deploy: in KV, where this disk has none.
  const kept = kv && !dev ? keptAssets(kv, { sourceMaps: options.serveSourceMaps }) : undefined;
  const [buildPath, build] = currentBuild(manifest.buildId);

  const actionOptions: ActionOptions = {
    // Kept in KV, the same across deploys: a cookie signed just before one verifies just after.
    secret: kv ? kvSecret(kv, "form_state") : () => Promise.resolve(manifest.actions.secret),
    buildId: manifest.buildId,
    maxBytes: options.actionBodyLimit,
    origins: options.origins,
    failures: failed,
    claim: kv ? claimInKv(kv) : claimInMemory(),
    submissions: kv ? submissionsInKv(kv) : submissionsInMemory(),
    telemetry,
  };
  // What a form posted without JavaScript left for the page it lands on: the frame's last step,
  // unless the telemetry's middleware, which must see it, comes between.
  const restore = formStateRestore(actionOptions);

  const scope: AppScope = {
    kv,
    build: manifest.buildId,
    trustProxy,
    closing: closing.signal,
    failures: failed,
    streamLifetimeMs: options.eventStreamLifetimeMs,
    eventStreams: { open: 0, max: options.maxEventStreams },
    requests: new InFlight(),
    refusals: refusalLines(),
    origins,
    auth,
    settings,
  };
  const app = new Hono();
  app.use(requestFrame({
    csp: cspAround(telemetry?.connectSources),
    logRequests: options.logRequests,
    requestIds: telemetry?.requestIds?.bind(telemetry),
    // Static files and the build's assets are served as they are (the assets precompressed).
    ahead: (c) => {
      const file = files(c);
      if (file) return file;
      const path = c.req.path;
      if (kept && path.startsWith("/_app/")) return kept;
      if (path === buildPath && (c.req.method === "GET" || c.req.method === "HEAD")) return build;
    },
    compress: options.compress,
    clock,
    guardBody: guardBody(options.bodyBudget),
    scope,
    answerError,
    inner: telemetry?.middleware ? undefined : restore,
  }));
  telemetry?.routes?.(app);
  if (telemetry?.middleware) {
    app.use(telemetry.middleware);
    app.use(restore); // inside the request's span
  }
  mountActions(app, manifest.actions.entries, actionOptions);

  const rulesHtml = { __html: speculationRules(manifest.routes) };
  const telemetryHead = telemetry?.head?.bind(telemetry);
  const renderContext = (c: Context) => {
    const kept = keptInputOf(c);
    return {
      nonce: nonceOf(c),
      assets: manifest.assets,
      islandStyles: manifest.styles?.islands,
      kept: kept && keptFields(kept),
      settings,
    };
  };
  const pageBuild = buildMeta(manifest.buildId);
  const render = (
    c: Context,
    tree: PageTree,
    props: PageProps<unknown>,
    pageProps?: Record<string, unknown>,
    init?: RenderInit,
  ) => {
    const formState = formStateOf(c);
    return renderPage(tree, {
      context: renderContext(c),
      islandsHead: telemetryHead && (() => telemetryHead(c, manifest.assets)),
      head: (
        <>
          {pageBuild}
          {formStateHead(formState)}
          <script
            type="speculationrules"
            nonce={nonceOf(c)}
            dangerouslySetInnerHTML={rulesHtml}
          />
          {keptNotice(keptInputOf(c))}
          {restoredPageCheck(c)}
        </>
      ),
      formState,
      props,
      pageProps,
      status: init?.status ?? 200,
      headers: init?.headers,
      signal: c.req.raw.signal,
      deadline: internalsOf(c).deadline,
      clock,
      inFlight: scope.requests,
      onStreamError: (error) => {
        internalsOf(c).renderFailed = true; // never stored by the page cache
        return isHttpError(error) ? errors.inPlace(c, error) : failed.boundary(c, error);
      },
    });
  };
  // Until the shell is ready: what streams after it is the request's, not the render call's.
  const renderSpan: typeof render = span
    ? (...args) => span("render", () => render(...args))
    : render;
  const errors = errorPages({
    manifest,
    failures: failed,
    origins: options.origins,
    timeoutMs: options.requestTimeoutMs,
    render: renderSpan,
    renderContext,
  });
  const cache = pageCache({
    routes: manifest.routes,
    buildId: manifest.buildId,
    kv,
    origins: options.origins,
    dev,
    options: options.pageCache,
    // The shell's deadline, then as long again for what streams after it (deadline.ts); no more
    // than a timer holds, which past it fired at 1 ms and aborted every render for the cache.
    renderLimitMs: options.requestTimeoutMs
      ? Math.min(2 * options.requestTimeoutMs + 1000, MAX_TIMER_MS)
      : 60_000,
    fetch: () => fetch,
    compress: options.compress,
    // Hits of routes without middleware of the team's, ahead of the app's own (fast_hit.ts),
    // recorded by the telemetry's `hit`; not when its middleware, which they skip, has none.
    ahead: (!telemetry?.middleware || telemetry.hit !== undefined) && {
      csp: cspAround(telemetry?.connectSources),
      logRequests: options.logRequests,
      requestIds: telemetry?.requestIds?.bind(telemetry),
      hit: telemetry?.hit?.bind(telemetry),
    },
  });
  // Each route's tree made once: the same for every request of it.
  const trees = new Map<ManifestRoute, PageTree>();
  for (const route of manifest.routes) {
    const page = route.module.default;
    if (!page) continue;
    const styles = manifest.styles?.pages[route.file];
    trees.set(route, { app: manifest.app, layouts: route.layouts, page, styles });
  }
  registerRoutes(
    app,
    manifest.routes,
    (c, route, params, data, init) => {
      const tree = trees.get(route);
      if (!tree) throw new Error(`routes/${route.file} has no default export to render`);
      return renderSpan(c, tree, pageProps(c, params, data), undefined, init);
    },
    telemetry,
    cache.around,
  );

  // No route matched: the chain of the URL's folder runs first, as for a page there.
  registerFolders(app, manifest, (c) => errors.respond(c, notFound()), telemetry);

  /** Every way a request can end other than with its response. */
  async function answerError(c: Context, error: unknown): Promise<Response> {
    if (error instanceof HTTPException) return error.getResponse(); // hono/basic-auth's 401, ...
    if (isRedirect(error)) return c.redirect(error.location, error.status);
    const refused = bodyRefusal(c);
    if (refused) return refused;
    // The client left (before the shell was ready, say) and the work failed with the request's
    // abort reason: nothing broke, and nobody is there to see a screen (499: client closed).
    const { signal } = c.req.raw;
    if (signal.aborted && error === signal.reason) return new Response(null, { status: 499 });
    if (isHttpError(error)) return await errors.respond(c, error); // expected: no failure
    if (internalsOf(c).stubCall) return stubFailure(c, failed, error);
    return failed.response(c, error);
  }
  app.onError((error, c) => answerError(c, error));

  const fetch = inFreshContext(
    guardRequests(withHonestHead(cache.ahead(app.fetch)), options.allowedHosts, dev),
  );
  app.fetch = fetch as typeof app.fetch;
  const jobs = kv && manifest.jobs
    ? listenJobs(kv, manifest.jobs, {
      telemetry,
      closing: closing.signal,
      settings,
      retries: options.jobRetries,
    })
    : undefined;
  const retention = options.assetRetention;
  const ready = kv && !dev && retention && retention.days > 0 && manifest.assets.files?.length
    ? keepWhileRunning({
      kv,
      root: options.root,
      manifest,
      retention: { ms: retention.days * 24 * 60 * 60 * 1000, maxBytes: retention.maxBytes },
      sourceMaps: options.serveSourceMaps,
    }, closing.signal)
    : Promise.resolve();
  scope.jobs = jobs;
  const close = async () => {
    closing.abort();
    await Promise.all([cache.close(), jobs?.ended()]);
    scope.refusals.flush(); // the counts no later line would say: the process may end now
  };
  return withScope({
    fetch,
    request: app.request,
    close,
    idle: () => scope.requests.idle(),
    stop: () => close().then(() => scope.requests.drain()).then(() => scope.refusals.flush()),
    ready,
  }, scope);
}

/** `data`, params, URL and middleware state (Hono's `c.var` is a fresh copy at each read). */
function pageProps(c: Context, params: Record<string, string>, data: unknown): PageProps<unknown> {
  return { data, params, url: new URL(c.req.url), state: c.var as State };
}
