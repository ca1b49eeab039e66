/**
 * @module
 * `POST /_action/:id`: where action calls from islands and forms posted with JavaScript off
 * arrive. Before an action runs, the request must be a POST (405), from one of the app's origins
 * (403: `hono/csrf`, which also refuses a request whose `Origin` is missing unless `Sec-Fetch-Site`
 * says same-origin), a form body (415), for an action this build has (else it comes from a page
 * older than the build: `stale.ts` answers), let through by the `_middleware` chain of the action
 * module's folder (whatever that answers: 401, 403, a redirect), within the body limit (413), and
 * decodable within the caps of `limits.ts` (400, and a warning in the log: a client's mistake; the
 * fields are counted as the body arrives; `read_call.ts`); none of these reach an action.
 * What a call holds while its action runs - its body and its decoded arguments - counts against
 * the app's body budget until it is answered: past it, 503 with `Retry-After`, and the action
 * does not run. An action that throws is a server failure, unless what it throws is an expected
 * error (`httpError`): that goes to the app's error pages, which answer the stub with JSON and a
 * form with its page's `_error.tsx`. Nothing here is ever cached, and every answer names the build
 * that gave it (`App-Build`), so a page older than it learns so.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { every } from "hono/combine";
import { contextStorage } from "hono/context-storage";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import type { Failures } from "../errors/failure.ts";
import { httpError, isHttpError } from "../shared/http_error.ts";
import { internalsOf } from "../server/internals.ts";
import { type ActionEntry, middlewaresOf } from "../server/manifest.ts";
import { type Telemetry, tracedMiddleware } from "../server/telemetry.ts";
import { encodeResult, REDIRECT_HEADER } from "../shared/action_wire.ts";
import { BUILD_HEADER } from "../shared/versions.ts";
import { formPage } from "./form_page.ts";
import { flashFormState, formState, type Secret } from "./form_state.ts";
import { isRedirect } from "./redirect.ts";
import type { Registry } from "./registry.ts";

export interface EndpointOptions {
  registry: Registry;
  /** Signs the form state carried across a redirect. */
  secret: Secret;
  /** The build answering (`App-Build`). */
  buildId: string;
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

/**
 * The call's reader (its decoder, the caps, the form parser) and the stale-call path, loaded at the
 * first call that needs them: a module once loaded stays in the heap for as long as the process
 * serves, and most requests are pages.
 */
const reader = () => import("./read_call.ts");
const stale = () => import("./stale.ts");

const FORM_TYPE = /^(multipart\/form-data|application\/x-www-form-urlencoded)\b/i;

/** Mounted at `ACTION_PATH`; errors go to the app's handler like any route's. */
export function actionEndpoint(options: EndpointOptions): Hono {
  const { registry, origins, telemetry } = options;
  const guards = new Map(
    [...registry.values()].map((entry) => [entry.id, chainOf(entry, telemetry)]),
  );
  const calls = new Map(
    [...registry.values()].map((entry) => [entry.id, callOf(entry, telemetry)]),
  );
  const endpoint = new Hono();
  endpoint.use(answerHeaders(options.buildId));
  endpoint.all(
    "/:id",
    onlyPost,
    csrf(origins ? { origin: origins } : undefined),
    onlyForms,
    knownAction(options),
    // `requestContext()` for the action and its middleware; only here, where it is needed: it
    // doubles Hono's own cost per request.
    contextStorage(),
    (c, next) => guards.get(internalsOf(c).action!.id)!(c, next),
    (c) => runAction(c, calls.get(internalsOf(c).action!.id)!, options),
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

function answerHeaders(buildId: string): MiddlewareHandler {
  return async function answerHeaders(c, next) {
    await next();
    c.header("Cache-Control", "no-store");
    c.header(BUILD_HEADER, buildId);
  };
}

const onlyPost: MiddlewareHandler = async function onlyPost(c, next) {
  if (c.req.method !== "POST") return c.text("Method Not Allowed", 405, { Allow: "POST" });
  await next();
};

/**
 * What forms and the stub send. `csrf` checks only bodies a cross-site page can send without
 * asking; others need a CORS preflight, which nothing here grants - and they are refused anyway.
 */
const onlyForms: MiddlewareHandler = async function onlyForms(c, next) {
  if (!FORM_TYPE.test(c.req.header("content-type") ?? "")) {
    return c.text("Unsupported Media Type", 415);
  }
  await next();
};

function knownAction(options: EndpointOptions): MiddlewareHandler {
  return async function knownAction(c, next) {
    const entry = options.registry.get(c.req.param("id")!);
    if (!entry) return await (await stale()).staleCall(c, options);
    internalsOf(c).action = entry;
    // Anything else (a browser posting a form) gets the failure screen.
    if (c.req.header("accept") === "application/json") internalsOf(c).stubCall = true;
    await next();
  };
}

async function runAction(c: Context, call: Call, options: EndpointOptions): Promise<Response> {
  const entry = internalsOf(c).action!;
  const invocation = await (await reader()).readCall(c, options.maxBytes);
  if (invocation instanceof Response) return tooLarge(c, invocation);
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
    await flashFormState(c, options.secret, page.pathname, { state }, page.secure);
  }
  return c.redirect(page.pathname + page.search, 303);
}

/**
 * A body past the limit - an attachment too large, most often - is the product's to explain: an
 * expected error, so a form posted without JavaScript gets its page's `_error.tsx` (code
 * `body_too_large`) rather than a bare text answer outside the app, and the stub its JSON.
 */
async function tooLarge(c: Context, refusal: Response): Promise<Response> {
  if (refusal.status !== 413) return refusal;
  await refusal.body?.cancel();
  delete internalsOf(c).bodyRefused; // answered by the error page, not by the bare refusal
  throw httpError(413, undefined, { code: "body_too_large", headers: refusal.headers });
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

/** Where a result that is a redirect (a `Response` with 3xx and `Location`) goes. */
function redirectOf(result: unknown): string | undefined {
  if (!(result instanceof Response)) return undefined;
  const location = result.headers.get("Location");
  if (result.status >= 300 && result.status < 400 && location) return location;
  throw new TypeError("a server action may return a Response only to redirect (status 3xx)");
}
