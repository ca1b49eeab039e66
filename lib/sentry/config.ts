/**
 * @module
 * Sentry's settings, from the environment the entry point hands over. Cheap and SDK-free: with
 * `SENTRY_DSN` (and `SENTRY_SPOTLIGHT`) unset there is no config, and no Sentry code is ever
 * imported, on the server or in the browser. A value that makes no sense is a problem the start
 * reports, never a silent default.
 */

export interface SentryConfig {
  dsn?: string;
  environment: string;
  /** Unset: the build's id (see `withRelease`). */
  release?: string;
  tracesSampleRate: number;
  /**
   * Requests a second (per process) whose caller's "sampled" decision is followed, past the rate
   * (`SENTRY_TRACES_PARENT_LIMIT`; see `sampling.ts`).
   */
  tracesParentLimit: number;
  /** Outgoing requests that get tracing headers; unset = all (never the Sentry ingest host). */
  tracePropagationTargets?: (string | RegExp)[];
  /** The same-origin path that forwards browser envelopes to Sentry, when enabled. */
  tunnel?: string;
  /** The Spotlight sidecar's stream URL (development). */
  spotlight?: string;
  /** Names beyond the built-in list whose values never reach Sentry (`SENTRY_SCRUB_FIELDS`). */
  scrubFields: string[];
  /**
   * `deno task start` runs the server with Deno's OpenTelemetry exporting to Sentry's OTLP endpoint
   * (`SENTRY_OTLP`, on by default; see `otel/env.ts`).
   */
  otlp: boolean;
}

export const TUNNEL_PATH = "/_sentry";
const SPOTLIGHT_DEFAULT = "http://localhost:8969/stream";
/** Enough for the calls a page makes on the trace the server sampled, at some pages a second. */
const PARENT_LIMIT_DEFAULT = 10;
const ON = ["1", "true", "yes", "on"];
const OFF = ["0", "false", "no", "off"];

type Env = (name: string) => string | undefined;

export function readSentryConfig(
  env: Env,
  dev: boolean,
): { config?: SentryConfig; problems: string[] } {
  const problems: string[] = [];
  const check = (name: string, valid: boolean, expected: string) => {
    if (!valid) problems.push(`${name}=${env(name)}: expected ${expected}`);
    return valid;
  };
  const dsn = env("SENTRY_DSN") || undefined;
  check("SENTRY_DSN", !dsn || isDsn(dsn), "a Sentry DSN (https://<key>@<host>/<project>)");
  const spotlight = spotlightUrl(env("SENTRY_SPOTLIGHT"));
  check("SENTRY_SPOTLIGHT", spotlight !== null, "1, 0 or the sidecar's URL");
  const tunnel = flag(env("SENTRY_TUNNEL"));
  check("SENTRY_TUNNEL", tunnel !== null, "1 or 0");
  const otlp = env("SENTRY_OTLP") ? flag(env("SENTRY_OTLP")) : true;
  check("SENTRY_OTLP", otlp !== null, "1 or 0");
  const rate = env("SENTRY_TRACES_SAMPLE_RATE");
  const tracesSampleRate = rate ? Number(rate) : dev ? 1 : 0.1;
  check("SENTRY_TRACES_SAMPLE_RATE", tracesSampleRate >= 0 && tracesSampleRate <= 1, "0 to 1");
  const parentLimit = env("SENTRY_TRACES_PARENT_LIMIT");
  const tracesParentLimit = parentLimit ? Number(parentLimit) : PARENT_LIMIT_DEFAULT;
  check(
    "SENTRY_TRACES_PARENT_LIMIT",
    /^\d{1,6}$/.test(parentLimit || "0"),
    "a whole number of requests a second, 0 to 999999",
  );
  if (problems.length > 0 || (!dsn && !spotlight)) return { problems };

  const targets = env("SENTRY_TRACE_PROPAGATION_TARGETS");
  return {
    problems,
    config: {
      dsn,
      environment: env("SENTRY_ENVIRONMENT") || "production",
      release: env("SENTRY_RELEASE") || undefined,
      tracesSampleRate,
      tracesParentLimit,
      tracePropagationTargets: targets?.split(",").map((t) => t.trim()).filter(Boolean).map(
        targetOf,
      ),
      tunnel: dsn && tunnel ? TUNNEL_PATH : undefined,
      spotlight: spotlight || undefined,
      scrubFields: env("SENTRY_SCRUB_FIELDS")?.split(",").map((f) => f.trim()).filter(Boolean) ??
        [],
      otlp: otlp === true,
    },
  };
}

/** The config with the build's id as the release when none was set. */
export function withRelease(config: SentryConfig, buildId: string): SentryConfig {
  return config.release ? config : { ...config, release: buildId };
}

/**
 * A propagation target that is a URL (`https://api.example.com`, `http://127.0.0.1:8080/v1`)
 * matches the URLs of that origin starting with its path. Sentry matches a string anywhere in the
 * URL, which also gave the trace and a caller's `baggage` to
 * `https://elsewhere.example/?next=https://api.example.com` (a webhook's URL a user typed),
 * `https://api.example.com.elsewhere.example/`, `https://api.example.com@elsewhere.example/` and,
 * for `http://127.0.0.1:80`, port 8080. Other targets (`localhost`, `.internal`) keep Sentry's
 * rule.
 */
function targetOf(target: string): string | RegExp {
  const url = /^(https?:\/\/[^/?#]*)(.*)$/i.exec(target);
  if (!url) return target;
  // The origin, then the end of the host (`/`, `?`, `#` or nothing), then the target's path.
  return new RegExp(`^${RegExp.escape(url[1])}(?=[/?#]|$)${RegExp.escape(url[2])}`, "i");
}

/** `{protocol}://{public key}@{host}/{project id}` */
function isDsn(value: string): boolean {
  const url = URL.parse(value);
  return !!url?.username && /^https?:$/.test(url.protocol) && /^\/(.+\/)?\d+$/.test(url.pathname);
}

/** true, false, or null when it says neither. */
function flag(value: string | undefined): boolean | null {
  if (!value) return false;
  const lower = value.toLowerCase();
  return ON.includes(lower) ? true : OFF.includes(lower) ? false : null;
}

/** `SENTRY_SPOTLIGHT=1` means the sidecar's default address; a URL names another; null: neither. */
function spotlightUrl(value: string | undefined): string | false | null {
  if (value?.includes("://")) return URL.canParse(value) ? value : null;
  const on = flag(value);
  return on === null ? null : on && SPOTLIGHT_DEFAULT;
}

/**
 * Where the browser SDK posts, for the CSP's `connect-src`: the ingest (unless tunnelled),
 * Spotlight.
 */
export function browserConnectSources(config: SentryConfig): string[] {
  const sources = config.spotlight ? [new URL(config.spotlight).origin] : [];
  if (config.dsn && !config.tunnel) sources.push(new URL(config.dsn).origin);
  return sources;
}

/** Where tracing headers and spans must never go: Sentry's ingest and the Spotlight sidecar. */
export function privateHosts(config: SentryConfig): string[] {
  const hosts: string[] = [];
  if (config.dsn) hosts.push(new URL(config.dsn).host);
  if (config.spotlight) hosts.push(new URL(config.spotlight).host);
  return hosts;
}
