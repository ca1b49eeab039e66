/**
 * @module
 * The environment that turns Deno's OpenTelemetry on and points it at Sentry, for the launcher
 * (`cli/launch.ts`): Deno reads every `OTEL_*` variable once, as the process starts, so they must
 * be set before the server's process exists. Traces go to Sentry's OTLP endpoint for the DSN,
 * `{scheme}://{host}/api/{project}/integration/otlp/v1/traces` with `x-sentry-auth: sentry
 * sentry_key={public key}`, and so do console logs (`.../v1/logs`), each line with the ids of the
 * span it was written in. Whatever `OTEL_*` the operator set stays as it is: an endpoint of theirs
 * (a local collector, say) takes the signal's destination and headers with it.
 */

type Env = (name: string) => string | undefined;

export interface OtlpSource {
  dsn: string;
  /** SENTRY_TRACES_SAMPLE_RATE: the ratio of new traces Deno samples. */
  sampleRate: number;
  environment: string;
  release?: string;
}

const FALSE = ["0", "false", "no", "off"];

/**
 * The variables to add for `source`, those the operator set left out: nothing when the operator
 * turned OpenTelemetry off (`OTEL_DENO=false`) or the platform runs it (Deno Deploy).
 */
export function sentryOtlpEnv(source: OtlpSource, env: Env): Record<string, string> {
  const own = env("OTEL_DENO");
  if ((own !== undefined && FALSE.includes(own.toLowerCase())) || env("DENO_DEPLOYMENT_ID")) {
    return {};
  }
  const { base, publicKey } = sentryOtlpBase(source.dsn);
  const auth = otlpHeaders({ "x-sentry-auth": `sentry sentry_key=${publicKey}` });
  const computed: Record<string, string> = {
    OTEL_DENO: "true",
    // Not Deno's `baggage` propagator: Deno 2.9.6 runs it on every request before the app, outside
    // any catch, and a value it cannot percent-decode (`baggage: a=%`) threw there - the request
    // was never answered and its connection never closed, even once the client had gone (2,000
    // such requests: 2,000 descriptors and 34 MB held for good). The app reads a caller's
    // `baggage` itself (`otel/request_span.ts`) and writes it on outgoing calls
    // (`sentry/otel_fetch.ts`).
    OTEL_PROPAGATORS: "tracecontext",
    ...sampler(source.sampleRate),
    // Sentry takes no OTLP metrics: off, or Deno would post them to localhost:4318 every minute.
    OTEL_DENO_METRICS: "false",
    OTEL_SERVICE_NAME: "app",
    OTEL_RESOURCE_ATTRIBUTES: resourceAttributes(source),
  };
  const general = env("OTEL_EXPORTER_OTLP_ENDPOINT") !== undefined;
  for (const signal of ["TRACES", "LOGS"]) {
    if (general || env(`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`) !== undefined) continue;
    // A per-signal endpoint is taken as it is: nothing is appended to it.
    computed[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] = `${base}/v1/${signal.toLowerCase()}`;
    computed[`OTEL_EXPORTER_OTLP_${signal}_HEADERS`] = auth;
  }
  return Object.fromEntries(Object.entries(computed).filter(([name]) => env(name) === undefined));
}

/**
 * Below 1, the ratio decides by the trace id alone, whatever flag a caller sends: a parent-based
 * sampler follows a `traceparent`'s `-01`, so any client could have every request of its own
 * traced, past the rate and the project's quota. The browser loses nothing by it: its calls
 * continue the page's trace id, which the ratio decides as it did for the page. At 1 every trace is
 * kept anyway, and parent-based lets a caller's `-00` (and Sentry's own posts, see
 * `sentry/otel_fetch.ts`) stay out. An operator who trusts its callers' flags (behind a proxy that
 * drops `traceparent` from the public) sets `OTEL_TRACES_SAMPLER=parentbased_traceidratio` itself.
 */
function sampler(rate: number): Record<string, string> {
  if (rate >= 1) return { OTEL_TRACES_SAMPLER: "parentbased_always_on" };
  return { OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: String(rate) };
}

/** `{scheme}://{host}{/path}/api/{project}/integration/otlp` and the public key of a DSN. */
export function sentryOtlpBase(dsn: string): { base: string; publicKey: string } {
  const url = new URL(dsn);
  const [, path, project] = url.pathname.match(/^(.*)\/(\d+)$/) ?? [];
  if (!url.username || !project) throw new Error(`not a Sentry DSN: ${dsn}`);
  return {
    base: `${url.protocol}//${url.host}${path}/api/${project}/integration/otlp`,
    publicKey: decodeURIComponent(url.username),
  };
}

/**
 * `key=value,...` with each value percent-encoded, as the OTel spec has
 * `OTEL_EXPORTER_OTLP_*_HEADERS` (Deno decodes them): the space and `=` in Sentry's header value
 * would otherwise be ambiguous.
 */
function otlpHeaders(headers: Record<string, string>): string {
  return Object.entries(headers).map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join(",");
}

/** Sentry reads the environment and the release of spans from these resource attributes. */
function resourceAttributes({ environment, release }: OtlpSource): string {
  const attributes: Record<string, string> = {
    "deployment.environment.name": environment,
    "deployment.environment": environment,
  };
  if (release) attributes["service.version"] = release;
  return otlpHeaders(attributes);
}
