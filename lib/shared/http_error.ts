/**
 * @module
 * Expected product errors: `throw httpError(403, "Only members can see this board")` refuses a
 * request for the product (a permission, a conflict, a missing entity) with a 4xx status and a
 * message meant for the user. Such an error is no failure: no digest, no error log line, no Sentry
 * event; the request is answered with its status and message (the nearest `_error.tsx`, or JSON).
 * `notFound()` is its 404. Free of server APIs, so `shell/runtime` exports it too: a product's
 * error catalogue is one module that its server code throws from and its islands read codes from
 * (the browser's `ActionError` mirrors it).
 */

const HTTP_ERROR = Symbol.for("app.httpError");
/** What a refusal's code may be: a name for programs, safe in JSON, a header and an attribute. */
const ERROR_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

/** The standard reason phrase of each 4xx status (RFC 9110 and the IANA registry). */
const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  407: "Proxy Authentication Required",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  418: "I'm a Teapot",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  423: "Locked",
  424: "Failed Dependency",
  425: "Too Early",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  451: "Unavailable For Legal Reasons",
};

/**
 * A 4xx status, 400-499: what {@link httpError} takes. A 5xx is no expected refusal but a failure,
 * so `httpError(503)` does not type-check (and throws a `TypeError` if forced).
 *
 * @example
 * ```ts
 * import { type ClientErrorStatus, httpError } from "shell";
 *
 * const refuse = (status: ClientErrorStatus) => httpError(status);
 * refuse(409);
 * ```
 */
export type ClientErrorStatus =
  // "400" | ... | "499", each made a number (written out in one type: `deno doc --lint` wants no
  // private helper types behind a public one).
  `4${0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9}${0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9}` extends
    infer S ? S extends `${infer N extends number}` ? N : never
    : never;

/**
 * What else an expected error carries to its response.
 *
 * @example
 * ```ts
 * import { httpError } from "shell";
 *
 * throw httpError(429, "Too many tries: wait a minute.", { headers: { "Retry-After": "60" } });
 * ```
 * @see docs/failures.md
 */
export interface HttpErrorInit {
  /** Headers for the response: `Retry-After` with a 429, `WWW-Authenticate` with a 401, ... */
  headers?: HeadersInit;
  /** What led to it, for the developer (never shown, never sent). */
  cause?: unknown;
  /**
   * A stable name for this refusal (`"slot_taken"`), from the product's error catalogue: code that
   * reacts to a refusal (a client of an API route, an island) tests the code, not the message,
   * which is the user's to read and may be reworded. Sent in the JSON answer as `error.code`, on an
   * island's `ActionError` as `code`, and to `_error.tsx` as the prop `code`. 1-64 characters of
   * `A-Z a-z 0-9 _ . -`.
   */
  code?: string;
}

/**
 * An expected refusal with a 4xx status; make one with {@link httpError}. Its message is product
 * text, shown to the user as it is (in production too).
 *
 * @example
 * ```ts
 * import { HttpError, httpError } from "shell";
 *
 * const refusal = httpError(409, "That title is taken");
 * console.log(refusal instanceof HttpError, refusal.status, refusal.message); // true 409 ...
 * ```
 */
export class HttpError extends Error {
  /** Marks an expected error, also across copies of this module (see `isHttpError`). */
  readonly [HTTP_ERROR] = true;
  /** 400-499. */
  readonly status: number;
  /** Sent with the response. */
  readonly headers?: HeadersInit;
  /** The catalogue's name for the refusal, if it gave one (`HttpErrorInit.code`). */
  readonly code?: string;

  /** Prefer {@link httpError}; the arguments are the same. */
  constructor(status: number, message?: string, init: HttpErrorInit = {}) {
    if (!Number.isInteger(status) || status < 400 || status > 499) {
      throw new TypeError(
        `httpError(status) takes a 4xx status (400\u2013499), not ${String(status)}: ` +
          `an unexpected failure is thrown as any other error and answers 500`,
      );
    }
    if (message !== undefined && typeof message !== "string") {
      throw new TypeError(`httpError(${status}, message): the message must be a string`);
    }
    if (init.code !== undefined && !(typeof init.code === "string" && ERROR_CODE.test(init.code))) {
      throw new TypeError(
        `httpError(${status}, message, { code }): a code is 1-64 characters of A-Z a-z 0-9 _ . -, ` +
          `not ${JSON.stringify(init.code)}`,
      );
    }
    super(message || statusText(status), init.cause === undefined ? {} : { cause: init.cause });
    this.name = "HttpError";
    this.status = status;
    this.headers = init.headers;
    if (init.code !== undefined) this.code = init.code;
  }
}

/**
 * An expected error to throw: the request is answered with `status` (4xx) and `message`, which
 * defaults to the status's standard text (`403` -> "Forbidden"). Throw it from middleware,
 * handlers, pages and layouts (before the shell, or inside a Suspense boundary after it) and server
 * actions. Pages get the nearest `_error.tsx` (`_404.tsx` for 404) with `{ status, message }`,
 * requests that want JSON `{"error":{"status":...,"message":...}}`, an island's action call an
 * `ActionError`. It is never a failure: no digest, no error line, no Sentry event. Anything other
 * than 400-499 is a `TypeError`. Keep a product's errors in one module: see docs/failures.md.
 *
 * @param status A 4xx status: 400-499.
 * @param message Shown to the user; the status's standard text if left out.
 * @param init Response headers (`Retry-After`, `WWW-Authenticate`) and a `cause`.
 * @example A product's errors in one place
 * ```ts
 * // routes/_board/errors.ts
 * import { httpError } from "shell";
 *
 * export const errors = {
 *   notMember: () => httpError(403, "Only members can see this board"),
 *   taskGone: (id: string) => httpError(404, `Task ${id} was deleted`),
 *   titleTaken: (title: string) => httpError(409, `A task named "${title}" exists already`),
 * };
 *
 * // anywhere on the server: a handler, a page, a middleware, a server action
 * // if (!member) throw errors.notMember();
 * ```
 */
export function httpError(
  status: ClientErrorStatus,
  message?: string,
  init?: HttpErrorInit,
): HttpError {
  return new HttpError(status, message, init);
}

/**
 * `httpError(404)`: the request is answered with `_404.tsx` (or JSON) and status 404, and nothing
 * of it is ever reported.
 *
 * @param message Shown to the user; "Not Found" if left out.
 * @example
 * ```ts
 * import { type Handlers, notFound } from "shell";
 *
 * const POSTS = new Map([["hello-world", "The first post"]]);
 *
 * export const handler: Handlers<string> = {
 *   GET(_req, ctx) {
 *     const post = POSTS.get(ctx.params.slug);
 *     if (post === undefined) throw notFound();
 *     return ctx.render(post);
 *   },
 * };
 * ```
 */
export function notFound(message?: string): HttpError {
  return new HttpError(404, message);
}

/**
 * True for an error made by `httpError` (or `notFound`), also across copies of this module: for
 * middleware that answers some refusals itself.
 *
 * @example
 * ```ts
 * import { isHttpError, type Middleware } from "shell";
 *
 * export const handler: Middleware = async function problemJson(c, next) {
 *   try {
 *     await next();
 *   } catch (error) {
 *     if (!isHttpError(error)) throw error;
 *     c.res = Response.json({ title: error.message }, { status: error.status });
 *   }
 * };
 * ```
 */
export function isHttpError(error: unknown): error is HttpError {
  return typeof error === "object" && error !== null && HTTP_ERROR in error;
}

/** `403` -> "Forbidden"; a 4xx without a registered name -> "Client Error". */
export function statusText(status: number): string {
  return STATUS_TEXT[status] ?? "Client Error";
}
