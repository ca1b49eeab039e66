/**
 * @module
 * Everything an app is made from besides its manifest, typed, with its defaults. The entry points
 * (`main.ts`, `lib/cli/`) read these from the environment and validate them (`cli/settings.ts`);
 * nothing under `lib/server/` reads the environment, so two apps in one process can differ.
 */
import type { AuthOptions } from "../auth/settings.ts";
import type { PageCacheOptions } from "../cache/page_cache.ts";
import type { Telemetry } from "./telemetry.ts";

/**
 * Everything an app is made from besides its manifest. Only `root` is required; the entry points
 * fill the rest from the environment (docs/settings.md).
 *
 * @example
 * ```ts
 * import { type AppOptions, createApp } from "shell/server";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * const options: AppOptions = {
 *   root: Deno.cwd(),
 *   dev: true,
 *   origins: ["https://example.com"],
 *   logRequests: true,
 * };
 * const app = createApp(manifest, options);
 * ```
 * @see docs/settings.md
 */
export interface AppOptions {
  /** The project root: `static/` and the build's assets are served from below it. */
  root: string;
  /** Development: error details on the failure screen, live reload. */
  dev?: boolean;
  /**
   * A request's deadline in ms: routes, actions, the tunnel and receiving a request body; what a
   * page streams after its shell gets as long again. `0` turns it off.
   */
  requestTimeoutMs?: number;
  /**
   * How long an event stream (`eventStream`, `changeStream`) stays open, in ms, before the server
   * ends it and the browser opens it again - through the route's guards, so a stream opened before
   * a sign-out ends within this. Each stream ends between 80 % and 100 % of it, at random, so
   * streams opened together do not all come back together. `0`: streams stay open.
   */
  eventStreamLifetimeMs?: number;
  /**
   * Event streams (`eventStream`, `changeStream`) this app keeps open at once; past it a stream is
   * refused with 503 and `Retry-After` (the live hooks back off and try again). Each holds a
   * connection - a file descriptor - and some 80 KB of memory for as long as its client stays,
   * two thirds of it Deno's own per connection (`bench/stream_memory.ts`): the default, 3,000
   * (some 240 MB), leaves a 512 MB isolate room for the app's own peak under load. Keep it below
   * the process's `LimitNOFILE`, which a proxy's streams would otherwise use up.
   */
  maxEventStreams?: number;
  /**
   * Every job's retries (ms before each try after the first) in place of its own and the default
   * (1 s ... 15 min): a test's `[]` or `[0]` reaches a job's dead letter at once, where the
   * product's `routes/_jobs.ts` keeps the schedule it runs with.
   */
  jobRetries?: number[];
  /** Largest server-action request body, in bytes. */
  actionBodyLimit?: number;
  /**
   * Bytes that request bodies still being received may hold together, across all connections;
   * past it a request gets 503 with `Retry-After`, so slow uploads cannot exhaust memory.
   */
  bodyBudget?: number;
  /** One JSON `info` line per request on stdout. */
  logRequests?: boolean;
  /**
   * The app's public origins (`https://example.com`), for an app behind a proxy whose `Host`
   * differs: server actions accept exactly these as `Origin`, and requests for any other host get
   * 400. Unset: the request's own origin is the app's.
   */
  origins?: string[];
  /**
   * Hosts (`Host` header) the app answers besides the origins' own (a health check's direct
   * address, say); others get 400. Unset: the origins' hosts; with no origins either, any host.
   */
  allowedHosts?: string[];
  /**
   * The client's address comes from the proxy's `X-Forwarded-For` (its last entry) rather than
   * the connection. Only behind a proxy that sets it: otherwise any client could claim any address.
   */
  trustProxy?: boolean;
  /**
   * Serve the build's source maps (`/_app/*.js.map`). Off once they are uploaded to Sentry (see
   * docs/telemetry.md): stacks are still readable there, and the sources stay private.
   */
  serveSourceMaps?: boolean;
  /**
   * Compress pages, JSON and other text the app makes, brotli or gzip per `Accept-Encoding`, still
   * streamed (on by default). `false` when a proxy or CDN in front compresses instead.
   */
  compress?: boolean;
  /** Errors and traces (Sentry, OpenTelemetry); none by default. */
  telemetry?: Telemetry;
  /**
   * The app's Deno KV store, opened by the entry point (`KV_PATH`); request code reaches it with
   * `kvOf(ctx)`. The app never closes it. Without one, `kvOf` throws, a form's state applies
   * once per process rather than once across them, and its signing key is the build's own.
   */
  kv?: Deno.Kv;
  /**
   * Keep this build's browser assets in `kv`, so that tabs opened before a later deploy still
   * load them: for `days` after a server of the build last ran, at most `maxBytes` (compressed)
   * across builds, the oldest builds going first. The entry points turn it on
   * (`ASSET_RETENTION_DAYS`, `ASSET_RETENTION_BYTES`, docs/deploying.md); unset here, nothing is
   * kept (what is kept is still served). Not in development. Whole numbers, as the variables
   * take them: `days` 0 to 365, `maxBytes` 1 MiB to 64 GiB (a `RangeError` otherwise).
   */
  assetRetention?: { days: number; maxBytes: number };
  /**
   * How users and sessions behave (`shell/auth`): timeouts, sign-in limits, the login page, the
   * bound on password hashes. Every setting has a default (docs/users.md).
   */
  auth?: AuthOptions;
  /**
   * The shared page cache's bounds (docs/caching.md); `false` turns it off. It needs `kv` and
   * `origins`: a page's key is made from the configured origin, never from a request's `Host`.
   */
  pageCache?: PageCacheOptions | false;
  /**
   * The values of the product's settings (`routes/_settings.ts`), by variable: the entry points
   * read them from the environment; a test gives those it needs - values as `settings(ctx)` reads
   * them (`2`), or what its schema reads to them (`"2"`, held as `2`, as from the environment),
   * each checked by its schema (a `SettingsError` naming it, as at start) - and each one not given
   * or given as `undefined` is as if its variable were unset (its default; a required one is an
   * error).
   */
  settings?: Readonly<Record<string, unknown>>;
}

export type ResolvedOptions =
  & Required<
    Omit<
      AppOptions,
      | "telemetry"
      | "origins"
      | "allowedHosts"
      | "kv"
      | "assetRetention"
      | "auth"
      | "pageCache"
      | "settings"
      | "jobRetries"
    >
  >
  & {
    pageCache?: PageCacheOptions | false;
    telemetry?: Telemetry;
    kv?: Deno.Kv;
    assetRetention?: AppOptions["assetRetention"];
    auth?: AuthOptions;
    origins?: string[];
    allowedHosts?: string[];
    settings?: AppOptions["settings"];
    jobRetries?: number[];
  };

export const DEFAULT_OPTIONS = {
  dev: false,
  requestTimeoutMs: 10_000,
  eventStreamLifetimeMs: 300_000,
  maxEventStreams: 3_000,
  actionBodyLimit: 1024 * 1024,
  bodyBudget: 64 * 1024 * 1024,
  logRequests: false,
  trustProxy: false,
  serveSourceMaps: true,
  compress: true,
} as const;

/**
 * What `assetRetention` may be: the bounds `ASSET_RETENTION_DAYS` and `ASSET_RETENTION_BYTES` are
 * read with (cli/settings.ts), and given in code are checked against (`resolveOptions`).
 */
export const RETENTION_BOUNDS = {
  days: { min: 0, max: 365 },
  maxBytes: { min: 1024 * 1024, max: 64 * 1024 ** 3 },
} as const;

export function resolveOptions(options: AppOptions): ResolvedOptions {
  const resolved = { ...DEFAULT_OPTIONS, ...withoutUndefined(options) };
  if (resolved.assetRetention) checkRetention(resolved.assetRetention);
  if (resolved.origins) {
    // Added to, never in place of, the origins' hosts: the public host is always answered, and
    // the page cache's own renders, made on the origin's URL, pass the guard.
    resolved.allowedHosts = hostsAnswered(resolved.origins, resolved.allowedHosts);
  }
  return resolved;
}

/**
 * A `RangeError` naming the setting outside its bounds: a fraction of a day, or a budget of
 * `Infinity`, given in code, kept or pruned by it at every start instead of stopping it.
 */
function checkRetention(retention: { days: number; maxBytes: number }): void {
  for (const name of ["days", "maxBytes"] as const) {
    const { min, max } = RETENTION_BOUNDS[name];
    const value = retention[name];
    if (!(Number.isInteger(value) && value >= min && value <= max)) {
      throw new RangeError(
        `assetRetention.${name} must be a whole number from ${min} to ${max}, not ${value}`,
      );
    }
  }
}

/** The hosts of `origins` and the further `allowedHosts`: what the app's guard and dev answer. */
export function hostsAnswered(origins?: string[], allowedHosts?: string[]): string[] {
  return [
    ...new Set([...(origins ?? []).map((origin) => new URL(origin).host), ...allowedHosts ?? []]),
  ];
}

function withoutUndefined<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;
}
