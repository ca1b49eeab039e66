/**
 * @module
 * `deno serve main.ts` stops when asked, not when the time limits of work long finished run out.
 * Deno stops serving on SIGTERM and then waits for the event loop to empty; an
 * `AbortSignal.timeout` listened to (by a fetch, `AbortSignal.any`, React's render) kept its timer
 * in that loop until it fired, so the process lingered after SIGTERM: for the request timeout (here
 * 60 s) after an error page rendered in place, for the send limit (5 s) after Sentry took an event
 * or the tunnel forwarded an envelope (`lib/server/time_limit.ts` is what they use now). The page
 * cache's revalidation, which had the same fault: page_cache_lease_test.ts.
 */
import assert from "node:assert/strict";
import { isErrorEvent, startSentryReceiver } from "shell/testing";
import { SEND_TIMEOUT_MS } from "../../lib/sentry/transport.ts";
import { UPSTREAM_TIMEOUT_MS } from "../../lib/sentry/tunnel.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

/** The deadline of every request (`REQUEST_TIMEOUT_MS`): an in-place error page's time limit. */
const DEADLINE_MS = 60_000;

const FILES = {
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
async function serve(root: string, env: Record<string, string>): Promise<TestServer> {
  return await startServer({ REQUEST_TIMEOUT_MS: String(DEADLINE_MS), ...env }, {
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

  await t.step("after an error page rendered in place (limited by the 60 s deadline)", async () => {
    await using server = await serve(root, {});
    const res = await server.fetch("/late");
    const body = await res.text();
    assert.equal(res.status, 200, "the status went out with the shell");
    assert.match(body, /<template id="app-error-0-html">.*Members only/s);
    // Half the limit that held it: seconds of room for a loaded machine, and far from 60 s.
    const bound = DEADLINE_MS / 2;
    const { code, ms } = await timedStop(server, bound);
    assert.ok(ms < bound, `stopped ${Math.round(ms)} ms after SIGTERM`);
    assert.equal(code, 0);
  });

  await t.step(
    "after Sentry took an event and the tunnel forwarded an envelope (each limited to 5 s)",
    async () => {
      await using receiver = startSentryReceiver();
      await using server = await serve(root, {
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
      await receiver.waitFor((item) => isErrorEvent(item) && item.payload.message !== undefined);
      await receiver.waitFor((item) => isErrorEvent(item) && item.payload.tags?.digest);
      // Both answered a moment ago: their limits held the exit about 5 s more. A fifth of that is
      // left as room for a loaded machine (the exit itself takes a few hundred ms when idle).
      const bound = Math.min(SEND_TIMEOUT_MS, UPSTREAM_TIMEOUT_MS) * 0.8;
      const { code, ms } = await timedStop(server, 2 * bound);
      assert.ok(ms < bound, `stopped ${Math.round(ms)} ms after SIGTERM`);
      assert.equal(code, 0);
    },
  );
});
