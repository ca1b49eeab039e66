/**
 * @module
 * `deno serve main.ts` stops when asked, not when the time limits of work long finished run out.
 * On SIGTERM Deno stops serving and then waits for the event loop to empty; the timer of an
 * `AbortSignal.timeout` is in that loop for as long as anything listens to the signal, and a
 * page cache's revalidation (its request's signal, listened to by the app and never let go) held a
 * stopped process for its whole render limit, twice the deadline. The framework's time limits are
 * `lib/server/time_limit.ts` now, which never hold the process. The in-place error page, a Sentry
 * send and a tunnel forward are checked as well: Deno's `fetch` and React 19.3's render let go of
 * their listeners when they end, so `AbortSignal.timeout` did not hold the exit there (measured),
 * but a listener kept anywhere on their way would.
 */
import assert from "node:assert/strict";
import { isErrorEvent, startSentryReceiver } from "shell/testing";
import { SEND_TIMEOUT_MS } from "../../lib/sentry/transport.ts";
import { UPSTREAM_TIMEOUT_MS } from "../../lib/sentry/tunnel.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { tempStore } from "../helpers/kv.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

/** The deadline of every request (`REQUEST_TIMEOUT_MS`): an in-place error page's time limit. */
const DEADLINE_MS = 60_000;

const FILES = {
  // Stale a second after its render: a request then revalidates it in the background.
  "routes/stale.tsx": `export const cache = { maxAge: 1, staleWhileRevalidate: 600 };
    let renders = 0;
    export default function Stale() { return <p>render {++renders}</p>; }`,
  // A boundary refused after the shell went out: `_error`'s page (here the plain one) in its place.
  "routes/late.tsx": `import { Suspense, use } from "react";
    import { httpError } from "shell";
    function Late({ refused }) { return <p>{use(refused)}</p>; }
    export default function Page() {
      const refused = new Promise((_, reject) =>
        setTimeout(() => reject(httpError(403, "Members only")), 50)
      );
      return <Suspense fallback={<p>loading</p>}><Late refused={refused} /></Suspense>;
    }`,
  "routes/boom.tsx": `export default function Boom() { throw new Error("boom"); }`,
};

/** `deno serve main.ts` of the project with `env`. */
async function serve(
  root: string,
  kvPath: string,
  env: Record<string, string>,
): Promise<TestServer> {
  // The page cache keys pages by the app's origin, and keeps them in a KV file.
  return await startServer((port) => ({
    REQUEST_TIMEOUT_MS: String(DEADLINE_MS),
    APP_ORIGIN: `http://127.0.0.1:${port}`,
    KV_PATH: kvPath,
    ...env,
  }), {
    root,
    args: (port) => ["serve", "-A", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
  });
}

/** SIGTERM, then the exit code and how long the exit took; killed past `bound`, for the assertion. */
async function timedStop(server: TestServer, bound: number) {
  const started = performance.now();
  const killer = setTimeout(() => server.kill(), bound);
  const code = await server.stop();
  clearTimeout(killer);
  return { code, ms: performance.now() - started };
}

Deno.test("deno serve stops when asked, whatever time limits its finished work had", async (t) => {
  const root = await builtCopy("serve-stop", FILES);

  await t.step("after a page cache revalidation (limited by twice the deadline)", async () => {
    await using store = await tempStore();
    await using server = await serve(root, store.path, {});
    const load = async () => {
      const res = await server.fetch("/stale");
      const html = (await res.text()).replaceAll("<!-- -->", "");
      return { state: res.headers.get("x-cache"), render: html.match(/render (\d+)/)?.[1] };
    };
    assert.deepEqual(await load(), { state: "MISS", render: "1" });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past maxAge
    assert.deepEqual(await load(), { state: "STALE", render: "1" });
    let page = await load();
    for (let i = 0; i < 100 && page.render !== "2"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      page = await load();
    }
    assert.deepEqual(page, { state: "HIT", render: "2" }, "revalidated in the background");
    // Half the deadline: the render limit (twice it) held the exit before; room for a loaded machine.
    const bound = DEADLINE_MS / 2;
    const { code, ms } = await timedStop(server, bound);
    assert.ok(ms < bound, `stopped ${Math.round(ms)} ms after SIGTERM`);
    assert.equal(code, 0);
  });

  await t.step("after an error page rendered in place (limited by the 60 s deadline)", async () => {
    await using store = await tempStore();
    await using server = await serve(root, store.path, {});
    const res = await server.fetch("/late");
    const body = await res.text();
    assert.equal(res.status, 200, "the status went out with the shell");
    assert.match(body, /<template id="app-error-0-html">.*Members only/s);
    // Half the limit: seconds of room for a loaded machine, and far from a timer left to fire.
    const bound = DEADLINE_MS / 2;
    const { code, ms } = await timedStop(server, bound);
    assert.ok(ms < bound, `stopped ${Math.round(ms)} ms after SIGTERM`);
    assert.equal(code, 0);
  });

  await t.step(
    "after Sentry took an event and the tunnel forwarded an envelope (each limited to 5 s)",
    async () => {
      await using receiver = startSentryReceiver();
      await using store = await tempStore();
      await using server = await serve(root, store.path, {
        SENTRY_DSN: receiver.dsn,
        SENTRY_TUNNEL: "1",
        SENTRY_TRACES_SAMPLE_RATE: "0",
      });
      const failed = await server.fetch("/boom");
      await failed.body?.cancel();
      assert.equal(failed.status, 500);
      const tunnelled = await server.fetch("/_sentry", {
        method: "POST",
        body: `${JSON.stringify({ dsn: receiver.dsn })}\n${JSON.stringify({ type: "event" })}\n` +
          `${JSON.stringify({ message: "via the tunnel" })}\n`,
      });
      await tunnelled.body?.cancel();
      assert.equal(tunnelled.status, 200);
      await receiver.waitFor((item) => item.payload.message === "via the tunnel");
      await receiver.waitFor((item) =>
        isErrorEvent(item) && item.payload.tags?.digest !== undefined
      );
      // Both answered a moment ago: a timer of theirs left to fire holds the exit most of 5 s more.
      // A fifth of that is room for a loaded machine (the exit takes under 0.4 s when idle).
      const bound = Math.min(SEND_TIMEOUT_MS, UPSTREAM_TIMEOUT_MS) * 0.8;
      const { code, ms } = await timedStop(server, 2 * bound);
      assert.ok(ms < bound, `stopped ${Math.round(ms)} ms after SIGTERM`);
      assert.equal(code, 0);
    },
  );
});
