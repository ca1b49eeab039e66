/**
 * @module
 * Keeps credentials out of Sentry, on the server and in the browser alike: every event and
 * transaction passes through `scrubIntegration` before it is sent. Credential headers
 * (`Authorization`, `Cookie`, ...), the value of every cookie (whatever its name: `sid`,
 * `PHPSESSID` or a product's own hold sessions without saying so; names are kept), and any header,
 * query parameter, body field, span attribute, breadcrumb datum, `extra` or `contexts` entry whose
 * name looks secret become `[Filtered]`; so do secret-looking parameters in every URL an event
 * carries. The SDKs, with `sendDefaultPii: false`, filter only some names and still send the other
 * cookies as they came. Browser-safe: no Deno or Node APIs (it is bundled into the browser SDK's
 * chunk).
 */
import type { Event, Integration, QueryParams, RequestEventData } from "@sentry/core";

export const FILTERED = "[Filtered]";

/** Credentials by name, though not all of them look like one (`Cookie`). */
const SECRET_HEADERS = new Set([
  "authorization",
  "cookie",
  "set-cookie",
  "proxy-authorization",
  "x-api-key",
]);

/** Case-insensitive substrings of a secret's name. */
const SECRET_NAMES = [
  "token",
  "secret",
  "password",
  "passwd",
  "auth",
  "session",
  "key",
  "csrf",
  "jwt",
];

/**
 * Span attributes that carry a header, named after it (`http.request.header.cookie`, and one per
 * cookie: `http.request.header.cookie.sid`).
 */
const HEADER_ATTRIBUTE = /^http\.(request|response)\.header\./;

/** Past this depth a value is filtered whole: the SDK normalizes events to less anyway. */
const MAX_DEPTH = 10;

/**
 * Runs after the SDKs' own processors (which attach the request), for every kind of event. A plain
 * integration object, which is all `defineIntegration` makes: importing it would load the browser's
 * or the server's copy of the SDK into the other (see `sdk.ts`).
 */
export function scrubIntegration(extraNames: readonly string[] = []): Integration {
  return { name: "Scrub", processEvent: scrubber(extraNames) };
}

/**
 * A copy of an event without its secrets; `extraNames` widen what looks secret. A copy, since an
 * event shares its breadcrumbs and contexts with the scope they came from.
 */
export function scrubber(extraNames: readonly string[] = []): (event: Event) => Event {
  const names = [...SECRET_NAMES, ...extraNames.map((name) => name.trim().toLowerCase())]
    .filter(Boolean);
  const isSecret = (name: string) => {
    const lower = name.toLowerCase().replace(HEADER_ATTRIBUTE, "");
    return SECRET_HEADERS.has(lower.split(".")[0]) ||
      names.some((secret) => lower.includes(secret));
  };

  /** `a=1&token=2` -> `a=1&token=[Filtered]`; a leading `?` stays. */
  const query = (pairs: string): string =>
    pairs.split("&").map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 1) return pair;
      const name = pair.slice(0, eq);
      return isSecret(decoded(name.replace(/^\?/, ""))) ? `${name}=${FILTERED}` : pair;
    }).join("&");

  /** The parameters of a URL's query and of its fragment (OAuth puts tokens there). */
  const url = (value: string): string => {
    const hash = value.indexOf("#");
    const [before, fragment] = hash < 0 ? [value, ""] : [value.slice(0, hash), value.slice(hash)];
    const mark = before.indexOf("?");
    const path = mark < 0 ? before : before.slice(0, mark) + query(before.slice(mark));
    return path + (fragment && "#" + query(fragment.slice(1)));
  };

  /**
   * A named value: filtered if its name looks secret, else its strings' URLs and its entries. Other
   * objects than plain ones and arrays are left as they are (an `Error`, a DOM node), but for what
   * they become in JSON (a `URL`'s `href`).
   */
  const field = (name: string, value: unknown, depth: number): unknown => {
    if (value === null || value === undefined) return value;
    if (isSecret(name) || depth > MAX_DEPTH) return FILTERED;
    if (typeof value === "string") return /query/i.test(name) ? query(value) : url(value);
    if (Array.isArray(value)) return value.map((item) => field(name, item, depth + 1));
    if (isPlainObject(value)) return fields(value, depth + 1);
    if (hasToJSON(value)) return field(name, value.toJSON(), depth + 1);
    return value;
  };

  const fields = <T extends object>(record: T, depth = 0): T =>
    Object.fromEntries(
      Object.entries(record).map(([name, value]) => [name, field(name, value, depth)]),
    ) as T;

  const queryString = (value: QueryParams): QueryParams =>
    typeof value === "string"
      ? query(value)
      : Array.isArray(value)
      ? value.map(([name, v]): [string, string] => [name, isSecret(name) ? FILTERED : v])
      : fields(value);

  /** A body: JSON or form-encoded text, or what a framework parsed it into. */
  const body = (data: unknown): unknown => {
    if (typeof data !== "string") return field("", data, 0);
    try {
      return JSON.stringify(field("", JSON.parse(data), 0));
    } catch {
      return query(data);
    }
  };

  const request = (req: RequestEventData): RequestEventData => ({
    ...req,
    ...req.url && { url: url(req.url) },
    ...req.query_string && { query_string: queryString(req.query_string) },
    ...req.headers && { headers: fields(req.headers) },
    ...req.cookies && { cookies: cookieNames(req.cookies) },
    ...req.data !== undefined && { data: body(req.data) },
  });

  return (event) => ({
    ...event,
    ...event.transaction && { transaction: url(event.transaction) },
    ...event.request && { request: request(event.request) },
    ...event.extra && { extra: fields(event.extra) },
    ...event.contexts && { contexts: fields(event.contexts) },
    ...event.breadcrumbs && {
      breadcrumbs: event.breadcrumbs.map((crumb) => ({
        ...crumb,
        ...crumb.message && { message: url(crumb.message) },
        ...crumb.data && { data: fields(crumb.data) },
      })),
    },
    ...event.spans && {
      spans: event.spans.map((span) => ({
        ...span,
        ...span.description && { description: url(span.description) },
        ...span.data && { data: fields(span.data) },
      })),
    },
  });
}

/** Every cookie by its name alone: a value is never known not to be a session. */
function cookieNames(cookies: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(cookies).map((name) => [name, FILTERED]));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function hasToJSON(value: unknown): value is { toJSON(): unknown } {
  return typeof (value as { toJSON?: unknown } | null)?.toJSON === "function";
}

function decoded(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll("+", " "));
  } catch {
    return name;
  }
}
