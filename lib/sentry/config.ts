/**
 * @module
 * Sentry settings, read once from the environment at start-up. Cheap and SDK-free: with
 * `SENTRY_DSN` (and `SENTRY_SPOTLIGHT`) unset, `sentryConfig` is `undefined` and no Sentry code
 * is ever imported, on the server or in the browser.
 */
import { join } from "node:path";
import { dev, root } from "../config.ts";
import { log } from "../log.ts";

export interface SentryConfig {
  dsn?: string;
  environment: string;
  release?: string;
  tracesSampleRate: number;
  /** Outgoing requests that get tracing headers; unset = all (never the Sentry ingest host). */
  tracePropagationTargets?: string[];
  /** The same-origin path that forwards browser envelopes to Sentry, when enabled. */
  tunnel?: string;
  /** The Spotlight sidecar's stream URL (development). */
  spotlight?: string;
  /** Name fragments, beside the built-in ones, whose fields never reach Sentry (`scrub.ts`). */
  scrubFields: string[];
}

export const TUNNEL_PATH = "/_sentry";
const SPOTLIGHT_DEFAULT = "http://localhost:8969/stream";

export function readSentryConfig(
  env: (name: string) => string | undefined,
): SentryConfig | undefined {
  const dsn = checked("SENTRY_DSN", env("SENTRY_DSN"), isDsn);
  const spotlight = checked(
    "SENTRY_SPOTLIGHT",
    spotlightUrl(env("SENTRY_SPOTLIGHT")),
    URL.canParse,
  );
  if (!dsn && !spotlight) return undefined;
  const targets = env("SENTRY_TRACE_PROPAGATION_TARGETS");
  return {
    dsn,
    environment: env("SENTRY_ENVIRONMENT") || "production",
    release: env("SENTRY_RELEASE") || buildId(),
    tracesSampleRate: sampleRate(env("SENTRY_TRACES_SAMPLE_RATE")),
    tracePropagationTargets: targets?.split(",").map((t) => t.trim()).filter(Boolean),
    tunnel: dsn && isOn(env("SENTRY_TUNNEL")) ? TUNNEL_PATH : undefined,
    spotlight,
    scrubFields: env("SENTRY_SCRUB_FIELDS")?.split(",").map((f) => f.trim()).filter(Boolean) ?? [],
  };
}

/** A setting that does not parse leaves Sentry off (or without that part), with a warning. */
function checked(
  name: string,
  value: string | undefined,
  valid: (value: string) => boolean,
): string | undefined {
  if (!value || valid(value)) return value || undefined;
  log("warn", `${name} is not valid and is ignored`, { [name]: value });
  return undefined;
}

/** `{protocol}://{public key}@{host}/{project id}` */
function isDsn(value: string): boolean {
  const url = URL.parse(value);
  return !!url?.username && /^\/(.+\/)?\d+$/.test(url.pathname);
}

function isOn(value: string | undefined): boolean {
  return value !== undefined && ["1", "true", "yes", "on"].includes(value.toLowerCase());
}

/** `SENTRY_SPOTLIGHT=1` means the sidecar's default address; a URL names another. */
function spotlightUrl(value: string | undefined): string | undefined {
  if (value?.includes("://")) return value;
  return isOn(value) ? SPOTLIGHT_DEFAULT : undefined;
}

function sampleRate(value: string | undefined): number {
  const rate = value === undefined || value === "" ? NaN : Number(value);
  if (rate >= 0 && rate <= 1) return rate;
  return dev ? 1 : 0.1;
}

/** The build's source fingerprint, shortened: the same sources give the same release. */
function buildId(): string | undefined {
  try {
    return Deno.readTextFileSync(join(root, "_build", "fingerprint")).trim().slice(0, 12);
  } catch {
    return undefined; // no build on disk (e.g. a deployment without `_build/fingerprint`)
  }
}

export const sentryConfig = readSentryConfig((name) => Deno.env.get(name));

/** Where the browser SDK posts, for the CSP's `connect-src`: the ingest (unless tunnelled), Spotlight. */
export function browserConnectSources(config: SentryConfig | undefined): string[] {
  if (!config) return [];
  const sources = config.spotlight ? [new URL(config.spotlight).origin] : [];
  if (config.dsn && !config.tunnel) sources.push(new URL(config.dsn).origin);
  return sources;
}
