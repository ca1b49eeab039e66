/**
 * @module
 * `kvOf` (and every taker of `AnyContext`) refuses a page's props: they carry `params` and `url` as
 * a handler's `ctx` does, so they used to type-check, and the page then failed at run time with
 * "pass a handler's ctx" - a message that did not say a page cannot read the store. The type check
 * is this file's own: the `@ts-expect-error` must meet its error, so `deno check` (and `deno test`)
 * fails on this file if props type-check again. At run time, the failure says what to do instead.
 */
import assert from "node:assert/strict";
import { kvOf } from "../lib/data.ts";
import type { PageProps } from "../lib/mod.ts";
import { captureLogs, TestClient } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";

/** Guards the line that must not type-check: compiled, never run. */
const NEVER = Deno.args.includes("--never");

function Page(props: PageProps) {
  // @ts-expect-error -- a page's props are not a request's context: load in the handler
  if (NEVER) kvOf(props);
  kvOf(props as never);
  return <p>unreachable</p>;
}

Deno.test("kvOf(page props): not a context to the type checker, and a failure that says why", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const app = memoryApp({ routes: { "shifts.tsx": { default: Page } } }, { kv });
  const res = await new TestClient(app).request("/shifts");
  assert.equal(res.status, 500);
  await res.body?.cancel();
  const [line] = logs.of(res).filter((l) => l.level === "error");
  assert.match(String(line.msg), /A page's props are not a request's context/);
  assert.match(String(line.msg), /kvOf\(ctx\), then ctx\.render\(data\)/);
});
