/**
 * @module
 * `main.ts` under `deno serve --parallel` (one worker per core), the way a host without our
 * `deno task start` runs it, with Sentry on: pages, an island and its chunk, not-found, and
 * Sentry's transactions named by route. It serves the framework's built test app.
 */
import assert from "node:assert/strict";
import { isTransaction, startSentryReceiver } from "shell/testing";
import { startServer, type TestServer } from "../helpers/server.ts";

/**
 * `deno serve --parallel main.ts` on the test app. Ended with SIGKILL: Deno 2.9.6's `--parallel` can
 * miss a SIGTERM that comes while a worker is still starting, and then never exits.
 */
async function serveMain(env: Record<string, string> = {}): Promise<TestServer> {
  const serve = ["serve", "-A", "--parallel", "--host", "127.0.0.1"];
  const server = await startServer(env, {
    args: (port) => [...serve, `--port=${port}`, "main.ts"],
  });
  return Object.assign(server, {
    async [Symbol.asyncDispose]() {
      server.kill();
      await server.stop();
    },
  });
}

Deno.test("deno serve --parallel main.ts serves the app", async (t) => {
  await using receiver = startSentryReceiver();
  await using server = await serveMain({
    SENTRY_DSN: receiver.dsn,
    SENTRY_TRACES_SAMPLE_RATE: "1",
  });

  await t.step("the home page answers 200", async () => {
    const res = await server.fetch("/");
    assert.equal(res.status, 200);
    assert.ok((await res.text()).includes("<h1>Fixture</h1>"));
  });

  await t.step("an island page names its chunk, and the chunk is served", async () => {
    const res = await server.fetch("/counter");
    const html = await res.text();
    assert.equal(res.status, 200);
    const chunk = /<app-island name="Counter" src="(\/_app\/Counter-\w+\.js)"/.exec(html)?.[1];
    assert.ok(chunk, "the island marker names its chunk");
    const code = await server.fetch(chunk);
    assert.equal(code.status, 200);
    assert.match(code.headers.get("content-type")!, /javascript/);
    await code.body?.cancel();
  });

  await t.step("an unknown URL gets the 404 page", async () => {
    const res = await server.fetch("/no/such/page");
    assert.equal(res.status, 404);
    assert.ok((await res.text()).includes("<h1>Page not found</h1>"));
  });

  await t.step("with SENTRY_DSN, its workers send transactions named by route", async () => {
    const res = await server.fetch("/blog/first-post");
    await res.body?.cancel();
    assert.equal(res.status, 200);
    const transaction = await receiver.waitFor((item) =>
      isTransaction(item) && item.payload.transaction === "GET /blog/:slug"
    );
    assert.equal(transaction.payload.contexts.trace.status, "ok");
  });
});
