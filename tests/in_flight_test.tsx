/**
 * @module
 * `app.idle()` (`lib/server/in_flight.ts`): a request is in flight until its answer is ready, and
 * a page until React has rendered all of it - its Suspense boundaries after the shell too - so that
 * a stop closes KV under none of them (`lib/cli/stop.ts`).
 */
import assert from "node:assert/strict";
import { Suspense, use } from "react";
import type { Handlers } from "../lib/mod.ts";
import { memoryApp } from "./helpers/app.ts";
import { within } from "./helpers/wait.ts";

const PENDING = Symbol("pending");
/** Whether `promise` has settled already (a settled one wins the race: it comes first). */
const settled = async (promise: Promise<unknown>) =>
  await Promise.race([promise, PENDING]) !== PENDING;

Deno.test("app.idle waits for an API route's answer and a page's last boundary", async () => {
  const late = Promise.withResolvers<string>();
  const answer = Promise.withResolvers<Response>();
  const entered = Promise.withResolvers<void>();
  function Late() {
    return <p>{use(late.promise)}</p>;
  }
  const api: Handlers = {
    GET() {
      entered.resolve();
      return answer.promise;
    },
  };
  const app = memoryApp({
    routes: {
      "later.tsx": {
        default: () => <Suspense fallback={<p>loading</p>}>{<Late />}</Suspense>,
      },
      "api/slow.ts": { handler: api },
    },
  });
  assert.ok(await settled(app.idle()), "idle with nothing asked");

  const page = await app.request("/later"); // the shell: its boundary still waits
  assert.equal(page.status, 200);
  assert.equal(await settled(app.idle()), false, "a page in flight until its boundary renders");
  const slow = app.request("/api/slow");
  await entered.promise;
  late.resolve("at last");
  assert.match(await page.text(), /at last/);
  assert.equal(await settled(app.idle()), false, "an API route in flight until it answers");

  answer.resolve(new Response("done"));
  assert.equal(await (await slow).text(), "done");
  await within(app.idle(), 5000, "idle once both are done");
  await app.close();
});
