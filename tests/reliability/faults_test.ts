/**
 * Faults outside the app: an upstream service that accepts the connection and never answers. A
 * route that calls it with a timeout (`AbortSignal.timeout`) must end, within that bound, on the
 * failure screen with a digest — the same digest as the JSON log line — before the shell (500)
 * and inside a Suspense boundary after it. A route whose calls have no timeout is ended the same
 * way by the request's deadline (`REQUEST_TIMEOUT_MS`). The routes live in a built copy of the
 * project.
 * (Sentry's own faults — its ingest down, slow, 500, 429 — are in tests/sentry_test.ts.)
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import { startServer } from "../helpers/server.ts";

const TIMEOUT_MS = 300;
// Well past the routes' own timeout, so that on a loaded machine it is still theirs that ends them.
const DEADLINE_MS = 2_000;

/** Path, status, and the error the log line names: the route's own timeout, or the deadline. */
const CASES = [
  ["/upstream/handler", 500, "TimeoutError"],
  ["/upstream/suspense", 200, "TimeoutError"],
  ["/unbounded/handler", 500, "DeadlineExceeded"],
  ["/unbounded/shell", 500, "DeadlineExceeded"],
  ["/unbounded/suspense", 200, "DeadlineExceeded"],
] as const;

const ROUTES: Record<string, string> = {
  "routes/upstream/handler.ts": `
    export const handler = {
      async GET() {
        const res = await fetch(Deno.env.get("UPSTREAM")!, { signal: AbortSignal.timeout(${TIMEOUT_MS}) });
        return new Response(await res.text());
      },
    };`,
  "routes/upstream/suspense.tsx": `
    import { Suspense, use } from "react";
    function Upstream({ answer }: { answer: Promise<string> }) {
      return <p>{use(answer)}</p>;
    }
    export default function Page() {
      const answer = fetch(Deno.env.get("UPSTREAM")!, { signal: AbortSignal.timeout(${TIMEOUT_MS}) })
        .then((res) => res.text());
      return (
        <Suspense fallback={<p>Asking upstream…</p>}>
          <Upstream answer={answer} />
        </Suspense>
      );
    }`,
  // The same calls with no timeout of their own: the request's deadline (REQUEST_TIMEOUT_MS) ends them.
  "routes/unbounded/handler.ts": `
    export const handler = {
      async GET() {
        const res = await fetch(Deno.env.get("UPSTREAM")!);
        return new Response(await res.text());
      },
    };`,
  "routes/unbounded/shell.tsx": `
    import { use } from "react";
    export default function Page() {
      return <p>{use(fetch(Deno.env.get("UPSTREAM")!).then((res) => res.text()))}</p>;
    }`,
  "routes/unbounded/suspense.tsx": `
    import { Suspense, use } from "react";
    function Upstream({ answer }: { answer: Promise<string> }) {
      return <p>{use(answer)}</p>;
    }
    export default function Page() {
      const answer = fetch(Deno.env.get("UPSTREAM")!).then((res) => res.text());
      return (
        <Suspense fallback={<p>Asking upstream…</p>}>
          <Upstream answer={answer} />
        </Suspense>
      );
    }`,
};

/** Accepts requests and never answers them, until disposed. */
function hangingUpstream() {
  const release = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    await release.promise;
    return new Response("too late");
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    async [Symbol.asyncDispose]() {
      release.resolve();
      await server.shutdown();
    },
  };
}

Deno.test("a hanging upstream is cut off by its timeout and ends on the failure screen", async (t) => {
  await using upstream = hangingUpstream();
  await using server = await startServer(
    { UPSTREAM: upstream.url, REQUEST_TIMEOUT_MS: String(DEADLINE_MS) },
    { root: await builtCopy("faults", ROUTES) },
  );

  for (const [path, status, name] of CASES) {
    await t.step(`${path}: status ${status}, the screen and its digest`, async () => {
      const began = performance.now();
      const res = await server.fetch(path);
      const body = await res.text();
      const took = performance.now() - began;

      assert.equal(res.status, status);
      const digest = body.match(/Digest: <code>([^<]+)<\/code>/)?.[1] ??
        body.match(/Digest: \\u003ccode>([^\\]+)\\u003c\/code>/)?.[1];
      assert.ok(digest, `the screen shows a digest:\n${body.slice(-600)}`);
      const line = await server.waitForLog((l) => l.level === "error" && l.path === path);
      assert.equal(line.digest, digest);
      assert.equal((line.error as { name: string }).name, name);
      assert.ok(took < 10_000, `bounded by the timeout, took ${Math.round(took)} ms`);
    });
  }
});
