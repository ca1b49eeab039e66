/**
 * @module
 * The framework's own values for one request, kept off the product's state: Hono's `c.var` is the
 * app's (`State`, typed by `createDefine<State>()`), and what the framework needs along a request —
 * its deadline, its route, the action it calls, its session — lives in one private record per
 * request, held in a `WeakMap` keyed by the request's Hono `Context` (gone with it). Each module
 * that keeps a value there declares it by merging into `Internals`
 * (`declare module "../server/internals.ts" { interface Internals { deadline: Deadline } }`).
 */
import type { Context } from "hono";

/** Every per-request value of the framework, by name; each module merges in its own. */
// deno-lint-ignore no-empty-interface -- filled by declaration merging, module by module
export interface Internals {}

const records = new WeakMap<Context, Partial<Internals>>();

/** The request's private record (made at its first use). */
export function internalsOf(c: Context): Partial<Internals> {
  let record = records.get(c);
  if (!record) {
    record = {};
    records.set(c, record);
  }
  return record;
}
