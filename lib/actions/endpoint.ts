/**
 * @module
 * `POST /_action/:id`: where action calls from islands and forms posted with JavaScript off
 * arrive. Before an action runs, the request must be a POST (405), from one of the app's origins
 * (403: `hono/csrf`, which also refuses a request whose `Origin` is missing unless `Sec-Fetch-Site`
 * says same-origin), a form body (415), for a known action (404), let through by the `_middleware`
 * chain of the action module's folder (whatever that answers: 401, 403, a redirect), within the
 * body limit (413), and decodable within the caps of `limits.ts` (400, and a warning in the log: a
 * client's mistake); none of these reach an action. An action that throws is a server failure.
 * Nothing here is ever cached.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { every } from "hono/combine";
import { csrf } from "hono/csrf";
import type { Failures } from "../errors/failure.ts";
import { bodyRefusal, limitBody } from "../server/bodies.ts";
import { log } from "../server/log.ts";
import { type ActionEntry, middlewaresOf } from "../server/manifest.ts";
import { decodeInvocation, type Invocation, PayloadRejected } from "./decode.ts";
import { flashFormState, formState } from "./form_state.ts";
import { isRedirect } from "./redirect.ts";
import type { Registry } from "./registry.ts";
import { encodeResult, REDIRECT_HEADER } from "./wire.ts";

export interface EndpointOptions {
  registry: Registry;
  /** Signs the form state carried across a redirect. */
  secret: string;
  /** Largest request body, in bytes. */
  maxBytes: number;
  /** The app's public origins; unset, the request's own. */
  origins?: string[];
  failures: Failures;
}

declare module "hono" {
  interface ContextVariableMap {
    /** The action a request to the endpoint calls, once known. */
    action: ActionEntry;
  }
}

const FORM_TYPE = /^(multipart\/form-data|application\/x-www-form-urlencoded)\b/i;

/** Mounted at `ACTION_PATH`; errors go to the app's handler like any route's. */
export function actionEndpoint(options: EndpointOptions): Hono {
  const { registry, maxBytes, origins } = options;
  const guards = new Map(
    [...registry.values()].map((entry) => [entry.id, chainOf(entry)]),
  );
  const endpoint = new Hono();
  endpoint.use(noStore);
  endpoint.all(
    "/:id",
    onlyPost,
    csrf(origins ? { origin: origins } : undefined),
    onlyForms,
    knownAction(registry),
    (c, next) => guards.get(c.get("action").id)!(c, next),
    (c) => limitBody(c, maxBytes) ?? runAction(c, options),
  );
  return endpoint;
}

/** The folder's middleware, as one: nothing to run for a module with none. */
function chainOf(entry: ActionEntry): MiddlewareHandler {
  const chain = entry.middlewares.flatMap(middlewaresOf);
  return chain.length === 0 ? (_c, next) => next() : every(...chain);
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
    c.set("action", entry);
    await next();
  };
}

async function runAction(c: Context, options: EndpointOptions): Promise<Response> {
  const entry = c.get("action");
  let invocation: Invocation;
  try {
    invocation = decodeInvocation(await c.req.formData());
  } catch (error) {
    return bodyRefusal(c) ?? badRequest(c, error);
  }
  const { args, form } = invocation;
  if (!form) return await callResponse(c, entry, args, options.failures);

  let result: unknown;
  try {
    result = await entry.action(...args);
  } catch (error) {
    if (isRedirect(error)) return c.redirect(error.location, 303);
    throw error; // the app's error handler: the failure screen
  }
  const location = redirectOf(result);
  if (location) return c.redirect(location, 303);
  const page = formPage(c, options.origins);
  if (form.key !== null) {
    const state = formState(result, form.key, entry.id, form.bound);
    flashFormState(c, options.secret, page.pathname, state);
  }
  return c.redirect(page.pathname + page.search, 303);
}

/** The answer to the stub: the result as `devalue`, or a digest the browser can show. */
async function callResponse(
  c: Context,
  entry: ActionEntry,
  args: unknown[],
  failures: Failures,
): Promise<Response> {
  try {
    const result = await entry.action(...args);
    const location = redirectOf(result);
    if (location) return c.body(null, 200, { [REDIRECT_HEADER]: location });
    return c.body(encodeResult(result, entry.name), 200, { "Content-Type": "application/json" });
  } catch (error) {
    if (isRedirect(error)) return c.body(null, 200, { [REDIRECT_HEADER]: error.location });
    const { digest, details } = failures.record(c, error, 500);
    return c.json({ digest, details }, 500);
  }
}

/** A body that cannot be read, or that the decoder refused: logged as a warning, no digest. */
function badRequest(c: Context, error: unknown): Response {
  if (!(error instanceof PayloadRejected)) {
    return c.text("Bad Request: the payload cannot be decoded", 400);
  }
  log("warn", `action call refused: ${error.message}`, {
    action: c.get("action").id,
    cap: error.cap ?? null,
    request_id: c.get("requestId") ?? null,
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
 */
function formPage(c: Context, origins: string[] | undefined): { pathname: string; search: string } {
  const referer = URL.parse(c.req.header("referer") ?? "");
  const ours = origins ?? [new URL(c.req.url).origin];
  if (!referer || !ours.includes(referer.origin)) return { pathname: "/", search: "" };
  return { pathname: `/${referer.pathname.replace(/^[/\\]+/, "")}`, search: referer.search };
}
