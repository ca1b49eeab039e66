/**
 * @module
 * `POST /_action/:id`: where action calls from islands and forms posted with JavaScript off
 * arrive. Before an action runs, the request must be a POST (405), from our own origin (403:
 * `hono/csrf`, which also refuses a request whose `Origin` is missing unless `Sec-Fetch-Site` says
 * same-origin), a form body (415), for a known action (404), within the body limit (413), and
 * decodable within the caps of `limits.ts` (400, and a warning in the log: a client's mistake);
 * none of these reach an action. An action that throws is a server failure. Nothing here is ever
 * cached.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { failureResponse, recordFailure } from "../failure.ts";
import { log } from "../log.ts";
// Types only: the endpoint names the request's span without loading Sentry.
import type {} from "../sentry/middleware.ts";
import { flashFormState, formState } from "./form_state.ts";
import { decodeInvocation, type Invocation, PayloadRejected } from "./decode.ts";
import type { ActionEntry, Registry } from "./registry.ts";
import { encodeResult, REDIRECT_HEADER } from "./wire.ts";

export interface EndpointOptions {
  registry: Registry;
  /** Signs the form state carried across a redirect. */
  secret: string;
  /** Largest request body, in bytes. */
  maxBytes: number;
}

declare module "hono" {
  interface ContextVariableMap {
    action: ActionEntry;
  }
}

const FORM_TYPE = /^(multipart\/form-data|application\/x-www-form-urlencoded)\b/i;

export function actionEndpoint({ registry, secret, maxBytes }: EndpointOptions): Hono {
  const endpoint = new Hono();
  endpoint.use(noStore);
  // `csrf` answers by throwing; its response is the answer.
  endpoint.onError((error, c) =>
    error instanceof HTTPException ? error.getResponse() : failureResponse(c, error)
  );
  endpoint.all(
    "/:id",
    onlyPost,
    csrf(),
    onlyForms,
    knownAction(registry),
    bodyLimit({ maxSize: maxBytes, onError: (c) => c.text("Payload Too Large", 413) }),
    (c) => runAction(c, secret),
  );
  return endpoint;
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
    c.get("sentryTrace")?.span.updateName(`action ${entry.name}`);
    await next();
  };
}

async function runAction(c: Context, secret: string): Promise<Response> {
  const entry = c.get("action");
  let invocation: Invocation;
  try {
    invocation = decodeInvocation(await c.req.formData());
  } catch (error) {
    return badRequest(c, error);
  }
  const { args, form } = invocation;
  if (!form) return await callResponse(c, entry, args);

  const result = await entry.action(...args); // a throw: onError, the failure screen
  const location = redirectOf(result);
  if (location) return c.redirect(location, 303);
  const page = refererPath(c);
  if (form.key !== null) {
    flashFormState(c, secret, page.pathname, formState(result, form.key, entry.id, form.bound));
  }
  return c.redirect(page.pathname + page.search, 303);
}

/** The answer to the stub: the result as `devalue`, or a digest the browser can show. */
async function callResponse(c: Context, entry: ActionEntry, args: unknown[]): Promise<Response> {
  try {
    const result = await entry.action(...args);
    const location = redirectOf(result);
    if (location) return c.body(null, 200, { [REDIRECT_HEADER]: location });
    return c.body(encodeResult(result), 200, { "Content-Type": "application/json" });
  } catch (error) {
    const { digest, details } = recordFailure(c, error, 500);
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

/** The page the form was on, from `Referer` when it is ours; the home page otherwise. */
function refererPath(c: Context): URL {
  const own = new URL(c.req.url);
  try {
    const referer = new URL(c.req.header("referer") ?? "");
    if (referer.origin === own.origin || referer.origin === c.req.header("origin")) return referer;
  } catch {
    // no Referer, or not a URL
  }
  return new URL("/", own);
}
