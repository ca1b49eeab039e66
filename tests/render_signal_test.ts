import assert from "node:assert/strict";
import { BoundaryWatch } from "../lib/render/stream_failure.ts";
import { deadlineClock } from "../lib/server/deadline.ts";

Deno.test("the render's signal takes back React's listener as an AbortSignal would", () => {
  const watch = new BoundaryWatch(
    new AbortController().signal,
    () => ({ stop: false, digest: undefined, tail: undefined }) as never,
    undefined,
    deadlineClock(10_000),
  );
  let heard = 0;
  const listener = () => heard++;
  watch.signal.addEventListener("abort", listener);
  watch.signal.removeEventListener("abort", listener);
  watch.abort("gone");
  assert.equal(heard, 0);
  assert.equal(watch.signal.aborted, true);
  assert.equal(watch.signal.reason, "gone");
});
