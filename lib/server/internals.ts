/**
 * @module
 * The framework's own values for one request, kept off the product's state: Hono's `c.var` is the
 * app's (`State`, typed by `createDefine<State>()`), and what the framework needs along a request -
 * its deadline, its route, the action it calls, its session - lives in one private record per
 * request, held by the request's Hono `Context` under a symbol of this module's (gone with it).
 * Each module that keeps a value there declares it by merging into `Internals`
 * (`declare module "../server/internals.ts" { interface Internals { deadline: Deadline } }`), and
 * is named in a type-only import below.
 */
import type { Context } from "hono";
// Every module that declares fields of `Internals`, for their types alone (nothing of them loads):
// TypeScript merges a declaration only when its module is in the program, so without these a
// module reading a field - or a product's test that imports only `shell` - would not see it.
// tests/process/imports_test.ts checks that the list is whole.
import type {} from "../actions/endpoint.ts";
import type {} from "../actions/form_state.ts";
import type {} from "../auth/current.ts";
import type {} from "../cache/page_cache.ts";
import type {} from "../errors/not_found.ts";
import type {} from "../otel/request_span.ts";
import type {} from "../sentry/middleware.ts";
import type {} from "./bodies.ts";
import type {} from "./deadline.ts";
import type {} from "./error_pages.tsx";
import type {} from "./event_stream.ts";
import type {} from "./folders.ts";
import type {} from "./in_flight.ts";
import type {} from "./routes.ts";
import type {} from "./scope.ts";
import type {} from "./security.ts";

/** Every per-request value of the framework, by name; each module merges in its own. */
// deno-lint-ignore no-empty-interface -- filled by declaration merging, module by module
export interface Internals {}

/** Where a context holds its record: a symbol no product code can name. */
const RECORD = Symbol("the framework's record of the request");

type Holder = Context & { [RECORD]?: Partial<Internals> };

/**
 * The request's private record (made at its first use), on its context under a symbol: not in a
 * `WeakMap`, whose young keys are ephemerons each scavenge of the garbage collector traces again.
 */
export function internalsOf(c: Context): Partial<Internals> {
  return (c as Holder)[RECORD] ??= {};
}
