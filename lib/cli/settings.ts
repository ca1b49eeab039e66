/**
 * @module
 * The environment, read and checked once at start-up. Every variable the app takes is validated
 * here (with valibot), each problem named with the variable and what it should be, so a setting
 * that makes no sense (`REQUEST_TIMEOUT_MS=soon`) stops the start instead of silently meaning
 * something else. The product's own settings (`routes/_settings.ts`) are read by the same rules,
 * with the framework's, into the same message. The entry points (`main.ts`, `lib/cli/`) are the
 * only readers of the environment; the app gets what this returns as options.
 */
import * as v from "valibot";
import type { SettingsDeclaration } from "../settings/declare.ts";
import { type Env, readVariables, SettingsError } from "../settings/read.ts";
import { flag, host, list, origin, wholeNumber } from "../settings/values.ts";
import { type AppOptions, RETENTION_BOUNDS } from "../server/options.ts";
import { readSentryConfig, type SentryConfig } from "../sentry/config.ts";

export { SettingsError };

export interface Settings {
  port: number;
  hostname: string;
  dev: boolean;
  app: Omit<AppOptions, "root" | "telemetry" | "kv">;
  /**
   * The KV store's file (relative: to the project root), or `:memory:`; undefined on Deno Deploy,
   * whose managed KV is the store.
   */
  kvPath?: string;
  /** Undefined: Sentry is off. */
  sentry?: SentryConfig;
}

// setTimeout's largest delay: a longer one fires at once.
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
const GIB = 1024 ** 3;

/** Every one of the framework's settings may be unset: its default is the app's. */
const unsetAllowed = <S extends Record<string, v.GenericSchema<string, unknown>>>(schemas: S) =>
  Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => [name, v.optional(schema)]),
  ) as {
    [K in keyof S]: v.OptionalSchema<S[K], undefined>;
  };

const SCHEMAS = unsetAllowed({
  PORT: wholeNumber(0, 65535, "a port number"),
  HOSTNAME: v.pipe(v.string(), v.nonEmpty("expected an address to listen on")),
  REQUEST_TIMEOUT_MS: wholeNumber(0, MAX_TIMEOUT_MS, "milliseconds (0 turns the deadline off)"),
  EVENT_STREAM_LIFETIME_MS: wholeNumber(0, MAX_TIMEOUT_MS, "milliseconds (0: streams stay open)"),
  EVENT_STREAMS_MAX: wholeNumber(1, 1_000_000, "a number of streams"),
  ACTION_BODY_LIMIT: wholeNumber(1, GIB, "a size in bytes"),
  REQUEST_BODY_BUDGET: wholeNumber(1, 64 * GIB, "a size in bytes"),
  LOG_REQUESTS: flag,
  APP_ORIGIN: list(origin),
  ALLOWED_HOSTS: list(host),
  TRUST_PROXY: flag,
  SERVE_SOURCE_MAPS: flag,
  COMPRESS: flag,
  KV_PATH: v.string(),
  PAGE_CACHE: flag,
  PAGE_CACHE_MEMORY_ENTRIES: wholeNumber(0, 1_000_000, "a number of pages"),
  PAGE_CACHE_MEMORY_BYTES: wholeNumber(0, 16 * GIB, "a size in bytes"),
  PAGE_CACHE_KV_ENTRIES: wholeNumber(1, 10_000_000, "a number of pages"),
  PAGE_CACHE_MAX_BODY: wholeNumber(1, 600 * 1024, "a size in bytes (at most 614400)"),
  PAGE_CACHE_TAG_CHECK_MS: wholeNumber(0, 60_000, "milliseconds"),
  ASSET_RETENTION_DAYS: wholeNumber(
    RETENTION_BOUNDS.days.min,
    RETENTION_BOUNDS.days.max,
    "days (0 keeps no earlier build's assets)",
  ),
  ASSET_RETENTION_BYTES: wholeNumber(
    RETENTION_BOUNDS.maxBytes.min,
    RETENTION_BOUNDS.maxBytes.max,
    "a size in bytes",
  ),
});

/** How long and how much of earlier builds' assets KV keeps by default: a week, 64 MiB. */
const ASSET_RETENTION = { days: 7, maxBytes: 64 * 1024 * 1024 };

/**
 * Where the data lives unless `KV_PATH` says otherwise (`.gitignore` keeps `.data/` out of git).
 */
export const DEFAULT_KV_PATH = ".data/kv.sqlite3";

type Parsed = { [K in keyof typeof SCHEMAS]?: v.InferOutput<typeof SCHEMAS[K]> };

/** Every variable the framework reads itself: a product's settings cannot take these names. */
const FRAMEWORK_NAMES = new Set([...Object.keys(SCHEMAS), "NODE_ENV", "DENO_DEPLOYMENT_ID"]);

/**
 * Reads every setting from `env` - the framework's, and the product's when it declares some
 * (`routes/_settings.ts`) - and throws one `SettingsError` naming each that makes no sense.
 */
export function readSettings(env: Env, declared?: SettingsDeclaration): Settings {
  const problems: string[] = [];
  const parsed: Parsed = readVariables(SCHEMAS, env, problems);
  const dev = env("NODE_ENV") === "development";
  const sentry = readSentryConfig(env, dev);
  problems.push(...sentry.problems);
  if (
    parsed.REQUEST_BODY_BUDGET !== undefined &&
    parsed.REQUEST_BODY_BUDGET < (parsed.ACTION_BODY_LIMIT ?? 0)
  ) {
    problems.push("REQUEST_BODY_BUDGET: must be at least ACTION_BODY_LIMIT");
  }
  const product = declared && productValues(declared, env, problems);
  if (problems.length > 0) throw new SettingsError(problems);

  return {
    port: parsed.PORT ?? 8000,
    // The dev server shows error details and source: only this machine, unless HOSTNAME says so.
    hostname: env("HOSTNAME") || (dev ? "127.0.0.1" : "0.0.0.0"),
    dev,
    app: {
      dev,
      requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
      eventStreamLifetimeMs: parsed.EVENT_STREAM_LIFETIME_MS,
      maxEventStreams: parsed.EVENT_STREAMS_MAX,
      actionBodyLimit: parsed.ACTION_BODY_LIMIT,
      bodyBudget: parsed.REQUEST_BODY_BUDGET,
      logRequests: parsed.LOG_REQUESTS,
      origins: parsed.APP_ORIGIN,
      allowedHosts: parsed.ALLOWED_HOSTS,
      trustProxy: parsed.TRUST_PROXY,
      serveSourceMaps: parsed.SERVE_SOURCE_MAPS,
      compress: parsed.COMPRESS,
      ...pageCacheOf(parsed),
      assetRetention: {
        days: parsed.ASSET_RETENTION_DAYS ?? ASSET_RETENTION.days,
        maxBytes: parsed.ASSET_RETENTION_BYTES ?? ASSET_RETENTION.maxBytes,
      },
      ...(product && { settings: product }),
    },
    sentry: sentry.config,
    kvPath: parsed.KV_PATH ?? (env("DENO_DEPLOYMENT_ID") ? undefined : DEFAULT_KV_PATH),
  };
}

/** The product's settings from `env`, each problem added to `problems`. */
function productValues(
  declared: SettingsDeclaration,
  env: Env,
  problems: string[],
): Record<string, unknown> {
  const names = Object.keys(declared.schemas);
  for (const name of names.filter((name) => FRAMEWORK_NAMES.has(name) || /^SENTRY_/.test(name))) {
    problems.push(
      `${name}: the framework's own setting; routes/_settings.ts must name it otherwise`,
    );
  }
  return readVariables(declared.schemas, env, problems);
}

/** `pageCache` when a `PAGE_CACHE*` variable is set: `false` for `PAGE_CACHE=0`. */
function pageCacheOf(parsed: Parsed): Pick<AppOptions, "pageCache"> {
  if (parsed.PAGE_CACHE === false) return { pageCache: false };
  const bounds = {
    memoryEntries: parsed.PAGE_CACHE_MEMORY_ENTRIES,
    memoryBytes: parsed.PAGE_CACHE_MEMORY_BYTES,
    kvEntries: parsed.PAGE_CACHE_KV_ENTRIES,
    maxBodyBytes: parsed.PAGE_CACHE_MAX_BODY,
    tagCheckMs: parsed.PAGE_CACHE_TAG_CHECK_MS,
  };
  return Object.values(bounds).some((value) => value !== undefined) ? { pageCache: bounds } : {};
}

/**
 * The environment's settings, the product's (`declared`) among them, or the process ends with one
 * message naming everything that is wrong.
 */
export function settingsOrExit(declared?: SettingsDeclaration): Settings {
  try {
    return readSettings((name) => Deno.env.get(name), declared);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    console.error(error.message);
    Deno.exit(1);
  }
}
