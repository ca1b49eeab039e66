/**
 * @module
 * `POST /_action/:id`: where action calls from islands and forms posted with JavaScript off
 * arrive. Before an action runs, the request must be a POST (405), from one of the app's origins
 * (403: `hono/csrf`, which also refuses a request whose `Origin` is missing unless `Sec-Fetch-Site`
 * says same-origin), a form body (415), for a known action (404), let through by the `_middleware`
 * chain of the action module's folder (whatever that answers: 401, 403, a redirect), within the
 * body limit (413), and decodable within the caps of `limits.ts` (400, and a warning in the log: a
 * client's mistake; the fields are counted as the body arrives); none of these reach an action.
 * What a call holds while its action runs — its body and its decoded arguments — counts against
 * the app's body budget until it is answered: past it, 503 with `Retry-After`, and the action
 * does not run. An action that throws is a server failure, unless what it throws is an expected
 * error (`httpError`): that goes to the app's error pages, which answer the stub with JSON and a
 * form with its page's `_error.tsx`. Nothing here is ever cached.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { every } from "hono/combine";
import { contextStorage } from "hono/context-storage";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import type { Failures } from "../errors/failure.ts";
import { isHttpError } from "../errors/http_error.ts";
import { bodyRefusal, holdBytes, limitBody, reserveBytes } from "../server/bodies.ts";
import { log } from "../server/log.ts";
import { type ActionEntry, middlewaresOf } from "../server/manifest.ts";
import { type Telemetry, tracedMiddleware } from "../server/telemetry.ts";
import { decodeInvocation, type Invocation, mostBytes, PayloadRejected } from "./decode.ts";
import { readForm } from "./form_body.ts";
import { flashFormState, formState } from "./form_state.ts";
import { ACTION_LIMITS } from "./limits.ts";
import { isRedirect } from "./redirect.ts";
import type { Registry } from "./registry.ts";
import { encodeResult, REDIRECT_HEADER } from "../shared/action_wire.ts";
import { internalsOf } from "../server/internals.ts";

export interface EndpointOptions {
  registry: Registry;
  /** Signs the form state carried across a redirect. */
  secret: string;
  /** Largest request body, in bytes. */
  maxBytes: number;
  /** The app's public origins; unset, the request's own. */
  origins?: string[];
  failures: Failures;
  /** Spans for each action (`action signGuestbook`) and its middleware. */
  telemetry?: Telemetry;
}

declare module "../server/internals.ts" {
  interface Internals {
    /** The action a request to the endpoint calls, once known. */
    action: ActionEntry;
    /**
     * Set for a call from an island's stub (`Accept: application/json`), which reads a failure's
     * digest as JSON, whatever failed: the folder's middleware, the action, the deadline.
     */
    stubCall: true;
  }
}

const FORM_TYPE = /^(multipart\/form-data|application\/x-www-form-urlencoded)\b/i;

/** Mounted at `ACTION_PATH`; errors go to the app's handler like any route's. */
export function actionEndpoint(options: EndpointOptions): Hono {
  const { registry, maxBytes, origins, telemetry } = options;
  const guards = new Map(
    [...registry.values()].map((entry) => [entry.id, chainOf(entry, telemetry)]),
  );
  const calls = new Map(
    [...registry.values()].map((entry) => [entry.id, callOf(entry, telemetry)]),
  );
  const endpoint = new Hono();
  endpoint.use(noStore);
  endpoint.all(
    "/:id",
    onlyPost,
    csrf(origins ? { origin: origins } : undefined),
    onlyForms,
    knownAction(registry),
    // `requestContext()` for the action and its middleware; only here, where it is needed: it
    // doubles Hono's own cost per request.
    contextStorage(),
    (c, next) => guards.get(internalsOf(c).action!.id)!(c, next),
    (c) => limitBody(c, maxBytes) ?? runAction(c, calls.get(internalsOf(c).action!.id)!, options),
  );
  return endpoint;
}

/** The folder's middleware, as one: nothing to run for a module with none. */
function chainOf(entry: ActionEntry, telemetry?: Telemetry): MiddlewareHandler {
  const chain = tracedMiddleware(entry.middlewares.flatMap(middlewaresOf), telemetry);
  return chain.length === 0 ? (_c, next) => next() : every(...chain);
}

type Call = (args: unknown[]) => Promise<unknown>;

/** Calls the action, as a span named after it where telemetry makes spans. */
function callOf(entry: ActionEntry, telemetry?: Telemetry): Call {
  const span = telemetry?.span?.bind(telemetry);
  const name = `action ${entry.name}`;
  return span ? (args) => span(name, () => entry.action(...args)) : (args) => entry.action(...args);
}

const noStore: MiddlewareHandler = async function noStore(c, next) {
  await next();
  c.header("Cache-Control", "no-store");
};

const onlyPost: MiddlewareHandler = async function onlyPost(c, next) {
  if (c.req.method !== "POST") return c.text("Method Not Allowed", 405, { Allow: "POST" });
  await next();
};

/**
 * What forms and the stub send. `csrf` checks only bodies a cross-site page can send without
 * asking; others need a CORS preflight, which nothing here grants — and they are refused anyway.
 */
const onlyForms: MiddlewareHandler = async function onlyForms(c, next) {
  if (!FORM_TYPE.test(c.req.header("content-type") ?? "")) {
    return c.text("Unsupported Media Type", 415);
  }
  await next();
};

function knownAction(registry: Registry): MiddlewareHandler {
  return async function knownAction(c, next) {
    const entry = registry.get(c.req.param("id")!);
    if (!entry) return c.text("Not Found", 404);
    internalsOf(c).action = entry;
    // Anything else (a browser posting a form) gets the failure screen.
    if (c.req.header("accept") === "application/json") internalsOf(c).stubCall = true;
    await next();
  };
}

async function runAction(c: Context, call: Call, options: EndpointOptions): Promise<Response> {
  const entry = internalsOf(c).action!;
  // What the call may hold once decoded — the most its body's size allows — is counted before
  // the body is read: a call the budget cannot take is refused (503) before any work on it. (A
  // body of unknown length is counted as it arrives, and its real figure once decoded.)
  const declared = Number(c.req.header("content-length"));
  const most = mostBytes(Math.min(declared >= 0 ? declared : 0, options.maxBytes));
  const busy = reserveBytes(c, most);
  if (busy) return busy;
  let invocation: Invocation;
  try {
    // A `_middleware` may have parsed the form already (Hono keeps it): counted after, then.
    const body = c.req.raw.bodyUsed
      ? await c.req.formData()
      : await readForm(c.req.raw, ACTION_LIMITS.fields);
    invocation = decodeInvocation(body);
  } catch (error) {
    return bodyRefusal(c) ?? badRequest(c, error);
  }
  // Then the figure for what was decoded, which the budget may still refuse.
  const full = holdBytes(c, declared >= 0 ? Math.min(invocation.bytes, most) : invocation.bytes);
  if (full) return full;
  const { args, form } = invocation;
  if (!form) return await callResponse(c, call, args, options.failures);

  let result: unknown;
  try {
    result = await call(args);
  } catch (error) {
    if (isRedirect(error)) return c.redirect(error.location, 303);
    throw error; // the app's error handler: the failure screen
  }
  const location = redirectOf(result);
  if (location) return c.redirect(location, 303);
  const page = formPage(c, options.origins);
  if (form.key !== null) {
    const state = formState(result, form.key, entry.id, form.bound);
    flashFormState(c, options.secret, page.pathname, state, page.secure);
  }
  return c.redirect(page.pathname + page.search, 303);
}

/** The answer to the stub: the result as `devalue`, or a digest the browser can show. */
async function callResponse(
  c: Context,
  call: Call,
  args: unknown[],
  failures: Failures,
): Promise<Response> {
  try {
    const result = await call(args);
    const location = redirectOf(result);
    if (location) return c.body(null, 200, { [REDIRECT_HEADER]: location });
    const text = encodeResult(result, internalsOf(c).action!.name);
    return c.body(text, 200, { "Content-Type": "application/json" });
  } catch (error) {
    if (isRedirect(error)) return c.body(null, 200, { [REDIRECT_HEADER]: error.location });
    if (isHttpError(error)) throw error; // the app's error pages: `{"error":{status,message}}`
    if (error instanceof HTTPException) throw error; // a response of its own (503, busy): as it is
    return stubFailure(c, failures, error);
  }
}

/**
 * A failed call from an island's stub: the digest as JSON, which the stub turns into an error the
 * island can show. Also for what fails around the action (its deadline passing, say).
 */
export function stubFailure(c: Context, failures: Failures, error: unknown): Response {
  const { digest, details } = failures.record(c, error, 500);
  return c.json({ digest, details }, 500);
}

/** A body that cannot be read, or that the decoder refused: logged as a warning, no digest. */
function badRequest(c: Context, error: unknown): Response {
  if (!(error instanceof PayloadRejected)) {
    return c.text("Bad Request: the payload cannot be decoded", 400);
  }
  log("warn", `action call refused: ${error.message}`, {
    action: internalsOf(c).action!.id,
    cap: error.cap ?? null,
    request_id: internalsOf(c).requestId ?? null,
  });
  return c.text(`Bad Request: ${error.message}`, 400);
}

/** Where a result that is a redirect (a `Response` with 3xx and `Location`) goes. */
function redirectOf(result: unknown): string | undefined {
  if (!(result instanceof Response)) return undefined;
  const location = result.headers.get("Location");
  if (result.status >= 300 && result.status < 400 && location) return location;
  throw new TypeError("a server action may return a Response only to redirect (status 3xx)");
}

/**
 * The page the form was on, for the 303 back to it: the `Referer` when it is one of our origins,
 * the home page otherwise. Only its path and query are kept, with one leading slash, so no
 * `Referer` (`http://host//evil.example/`, `http://host/\evil.example/`) can point off-site.
 * `secure`: the page is served over HTTPS — behind a proxy, by its public origin, not our URL.
 */
export function formPage(c: Context, origins: string[] | undefined) {
  const referer = URL.parse(c.req.header("referer") ?? "");
  const ours = origins ?? [new URL(c.req.url).origin];
  const origin = referer && ours.includes(referer.origin) ? referer.origin : ours[0];
  const secure = origin.startsWith("https:");
  if (!referer || origin !== referer.origin) return { pathname: "/", search: "", secure };
  const pathname = `/${referer.pathname.replace(/^[/\\]+/, "")}`;
  return { pathname, search: referer.search, secure };
}
