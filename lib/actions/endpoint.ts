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
 * form with its page's `_error.tsx`. A post that carries a submission key (every rendered form, a
 * stub's call with a form) runs its action once per submission: a repeat gets the first's answer,
 * or 409 `already_sent` (`once.ts`). Nothing here is ever cached, and every answer names the build
 * that gave it (`App-Build`), so a page older than it learns so.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { every } from "hono/combine";
import { contextStorage } from "hono/context-storage";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { describe } from "../errors/digest.ts";
import type { Failures } from "../errors/failure.ts";
import { httpError, isHttpError } from "../shared/http_error.ts";
import { internalsOf } from "../server/internals.ts";
import { log } from "../server/log.ts";
import { type ActionEntry, middlewaresOf } from "../server/manifest.ts";
import { type Telemetry, tracedMiddleware } from "../server/telemetry.ts";
import { encodeResult, REDIRECT_HEADER } from "../shared/action_wire.ts";
import { parse, stringify } from "devalue";
import type { Invocation } from "./decode.ts";
import {
  alreadySent,
  claimSubmission,
  type Held,
  MAX_OUTCOME,
  type Outcome,
  type Submissions,
} from "./once.ts";
import { BUILD_HEADER } from "../shared/versions.ts";
import { formPage } from "../server/form_page.ts";
import { flashFormState, type FormState, formState, type Secret } from "./form_state.ts";
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
  /** Where submissions are claimed, so that each has its effect once (`once.ts`). */
  submissions: Submissions;
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
  const invocation = await (await reader()).readCall(c, options.maxBytes);
  if (invocation instanceof Response) return tooLarge(c, invocation);
  const { args, form } = invocation;
  const run = form
    ? () => formOutcome(c, call, args, form, options)
    : () => callOutcome(c, call, args, options.failures);
  if (!invocation.once) {
    const outcome = await run();
    return outcome instanceof Response ? outcome : await answer(c, outcome, options);
  }
  const { submissions } = options;
  const once = `${internalsOf(c).action!.id}.${invocation.once}`;
  const first = await claimSubmission(submissions, once, internalsOf(c).deadline);
  if (!("held" in first)) return await answer(c, first, options);
  const cookies = cookiesSet(c);
  let outcome: Outcome | Response;
  try {
    outcome = await run();
  } catch (error) {
    await settle(submissions, once, first, undefined); // refused or failed: sending again runs it
    throw error;
  }
  if (outcome instanceof Response) {
    await settle(submissions, once, first, undefined);
    return outcome;
  }
  // An answer that set cookies (a sign-in's session) is more than its outcome, and cookies are not
  // kept: a repeat would answer without them (signed out), so it is refused, as a large outcome.
  // One that only deletes cookies (a sign-out) is repeated: the server ended what they held.
  const kept = cookiesSet(c) === cookies && JSON.stringify(outcome).length <= MAX_OUTCOME;
  await settle(submissions, once, first, kept ? outcome : { kept: false });
  return await answer(c, outcome, options);
}

/**
 * Keeps the outcome, or releases the key - if the claim is still this post's. One whose lease
 * lapsed while its action ran, and which a repeat took (and ran), is left as the repeat made it:
 * the repeat's outcome is the one its own repeats get, and releasing it would let a third run. A
 * warning says so, as two effects happened. (A key gone meanwhile - its repeat failed - is this
 * post's again: its outcome is kept.) A store that fails it (a file another process locked)
 * leaves the claim to its lease - its repeats get `already_sent` meanwhile - and a warning: the
 * answer stays the action's, where KV's error replaced a refusal, a failure's digest or an effect.
 */
async function settle(
  submissions: Submissions,
  once: string,
  claim: Held,
  outcome: Outcome | undefined,
): Promise<void> {
  try {
    if (await submissions.settle(once, claim, outcome)) return;
    log("warn", "A submission's action outlasted its claim: another post of it ran too", {
      submission: once,
    });
  } catch (error) {
    log("warn", "A submission's outcome could not be kept: its repeats get already_sent", {
      error: describe(error),
    });
  }
}

/** How many cookies the answer sets so far, deletions (`Max-Age=0`) aside. */
function cookiesSet(c: Context): number {
  return c.res.headers.getSetCookie().filter((line) => !DELETION.test(line)).length;
}

const DELETION = /;\s*max-age=0\s*(;|$)/i;

/** A form posted without JavaScript: where the browser goes, and the form's state for that page. */
async function formOutcome(
  c: Context,
  call: Call,
  args: unknown[],
  form: NonNullable<Invocation["form"]>,
  options: EndpointOptions,
): Promise<Outcome> {
  let result: unknown;
  try {
    result = await call(args);
  } catch (error) {
    if (isRedirect(error)) return { to: error.location };
    throw error; // the app's error handler: the failure screen
  }
  const location = redirectOf(result);
  if (location) return { to: location };
  const page = formPage(c, options.origins);
  const to = page.pathname + page.search;
  if (form.key === null) return { to };
  const state = formState(result, form.key, internalsOf(c).action!.id, form.bound);
  return { to, page: page.pathname, state: stringify(state) };
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

/** A call from the stub: the result as `devalue`, or a digest the browser can show. */
async function callOutcome(
  c: Context,
  call: Call,
  args: unknown[],
  failures: Failures,
): Promise<Outcome | Response> {
  try {
    const result = await call(args);
    const location = redirectOf(result);
    if (location) return { redirect: location };
    return { result: encodeResult(result, internalsOf(c).action!.name) };
  } catch (error) {
    if (isRedirect(error)) return { redirect: error.location };
    if (isHttpError(error)) throw error; // the app's error pages: `{"error":{status,message}}`
    if (error instanceof HTTPException) throw error; // a response of its own (503, busy): as it is
    return stubFailure(c, failures, error);
  }
}

/** The response for an outcome: the first post's, or a repeat's of the same submission. */
async function answer(c: Context, outcome: Outcome, options: EndpointOptions): Promise<Response> {
  if ("result" in outcome) {
    return c.body(outcome.result, 200, { "Content-Type": "application/json" });
  }
  if ("redirect" in outcome) return c.body(null, 200, { [REDIRECT_HEADER]: outcome.redirect });
  if ("kept" in outcome) throw alreadySent();
  if (outcome.state !== undefined && outcome.page !== undefined) {
    const state = parse(outcome.state) as FormState;
    const { secure } = formPage(c, options.origins);
    await flashFormState(c, options.secret, outcome.page, { state }, secure);
  }
  return c.redirect(outcome.to, 303);
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
