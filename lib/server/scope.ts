/**
 * @module
 * What a request's code needs from the app answering it, beyond the request itself: the app's KV
 * store, whether the proxy's forwarded address is trusted, the signal that the app is closing, how
 * its failures are recorded, its public origins, its users' settings and the product's own. The
 * app keeps it in every request's private record (`internals.ts`) - one object per app, so nothing
 * is made per request, and two apps in one process keep their own - and, for in-process tools
 * outside any request (the test kit's `signInAs`), by the object `createApp` returned. Read it
 * through `kvOf`, `clientAddress` and `eventStream` rather than directly.
 * A handler's `ctx` leads back to its request's Hono context (`contextOf`), so each of these takes
 * whichever the code has in hand.
 */
import type { AuthOptions } from "../auth/settings.ts";
import type { Failures } from "../errors/failure.ts";
import type { AppJobs } from "../kv/jobs/listen.ts";
import type { ProductSettings } from "../settings/declare.ts";
import type { InFlight } from "./in_flight.ts";
import type { RefusalLines } from "./request_log.ts";
import { internalsOf } from "./internals.ts";
import type { Context } from "./types.ts";

export interface AppScope {
  /** `AppOptions.kv`. */
  readonly kv?: Deno.Kv;
  /** The build serving (the manifest's id): every event stream names it first. */
  readonly build: string;
  /** `AppOptions.trustProxy`. */
  readonly trustProxy: boolean;
  /** Aborts when the app closes: long-lived responses end then. */
  readonly closing: AbortSignal;
  /**
   * The app's failures: what a request's work that fails after its answer went out (an event
   * stream's source) records, as the app records any other (a line, a digest, an event).
   */
  readonly failures: Failures;
  /** `AppOptions.eventStreamLifetimeMs`: how long an event stream stays open (0, unset: no end). */
  readonly streamLifetimeMs?: number;
  /** The app's event streams open now, and `AppOptions.maxEventStreams`. */
  readonly eventStreams: { open: number; readonly max: number };
  /** The app's requests in flight, and pages still rendering (`App.idle`). */
  readonly requests: InFlight;
  /** The app's lines of refused requests, ten a second of each kind (`request_log.ts`). */
  readonly refusals: RefusalLines;
  /** `AppOptions.origins`: the app's public origins, when configured. */
  readonly origins?: string[];
  /** `AppOptions.auth`: how users and sessions behave (`lib/auth/settings.ts`). */
  readonly auth?: AuthOptions;
  /** The product's settings (`routes/_settings.ts`), read with `settings(ctx)`. */
  readonly settings?: ProductSettings;
  /**
   * The app's background jobs, once it listens for them (the test kit's `watchJobs`). Not readonly:
   * `createApp` sets it last, so that no queue listener or cron starts for an app whose making
   * failed (a route, action or folder the manifest cannot register) and that nobody can close.
   */
  jobs?: AppJobs;
}

declare module "./internals.ts" {
  interface Internals {
    appScope: AppScope;
  }
}

/** On a handler's `ctx`: the Hono context of its request. */
export const CONTEXT = Symbol("the request's Hono context");

/**
 * Whatever a request's code has in hand: a middleware's `c`, `requestContext()` in a server
 * action, or a handler's `ctx`. `kvOf`, `eventStream` and `currentUser` take any of them.
 *
 * @example
 * ```ts
 * import type { AnyContext } from "shell";
 * import { kvOf } from "shell/data";
 *
 * export async function countVisit(from: AnyContext): Promise<void> {
 *   await kvOf(from).atomic().sum(["visits"], 1n).commit();
 * }
 * ```
 * @see docs/data.md - Reading and writing from the app
 */
export type AnyContext = Context | {
  readonly params: unknown;
  readonly url: URL;
  // A handler's ctx has it and a page's props do not: they share `params` and `url`, and a page
  // renders what its handler loaded, so props must not type-check here to fail at run time.
  render(...args: never): unknown;
};

/** The Hono context of the request `from` belongs to. */
export function contextOf(from: AnyContext): Context {
  if (CONTEXT in from) return (from as { [CONTEXT]: Context })[CONTEXT];
  if ("req" in from) return from;
  throw new TypeError(
    "data" in from
      ? "A page's props are not a request's context: a page renders what its handler loaded. " +
        "Read in the route's handler (kvOf(ctx), then ctx.render(data)) and take it as props.data"
      : "Not a request's context: pass a handler's ctx, a middleware's c or requestContext()",
  );
}

/**
 * Each app's scope by the object `createApp` returned, for what works on an app in this process
 * outside any request: the test kit's `signInAs`. An object reference: no request can name it.
 */
const byApp = new WeakMap<object, AppScope>();

/** `app`, its scope kept for `scopeOfApp`. */
export function withScope<T extends object>(app: T, scope: AppScope): T {
  byApp.set(app, scope);
  return app;
}

/** The scope of an app made by `createApp` in this process, if `app` is one. */
export function scopeOfApp(app: object): AppScope | undefined {
  return byApp.get(app);
}

export function scopeOf(from: AnyContext): AppScope {
  const scope = internalsOf(contextOf(from)).appScope;
  if (!scope) throw new Error("No app scope: this request is not being answered by createApp()");
  return scope;
}
