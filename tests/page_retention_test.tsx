/**
 * What a page's response keeps alive while its body waits to be sent. React's render (the body
 * stream's source) holds its `onError` until the body is read to the end; a request's context
 * reachable from there lives as long as every page still being written, and under load is promoted
 * and waits for a full collection (docs/performance.md).
 */
import assert from "node:assert/strict";
import type { Context, Next } from "hono";
import { memoryApp } from "./helpers/app.ts";
import { heapAfterGc } from "./helpers/heap.ts";

Deno.test("a page rendered whole at its shell lets go of its request's context before its body is read", async () => {
  let collected = 0;
  const contexts = new FinalizationRegistry<void>(() => collected++);
  const app = memoryApp({
    routes: {
      "_middleware.ts": {
        handler: (c: Context, next: Next) => {
          contexts.register(c, undefined);
          return next();
        },
      },
      "page.tsx": { default: () => <p>Nothing is left to render after the shell.</p> },
    },
  });
  const unread: Response[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await app.fetch(new Request("http://localhost/page"));
    assert.equal(res.status, 200);
    unread.push(res);
  }
  await heapAfterGc();
  // Finalizers run in tasks of their own, after the collection.
  for (let turn = 0; turn < 10 && collected < unread.length; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  assert.equal(collected, unread.length, "contexts still reachable from unsent pages");
  for (const res of unread) assert.match(await res.text(), /Nothing is left to render/);
  await app.close();
});
