/**
 * @module
 * Server failures, in-process, against an app of failing routes held in memory: each kind answers
 * with the server-side screen, whose digest is the one in the single JSON line the failure wrote
 * to stdout, and no production response ever holds the error's message; in development the screen
 * shows it, with the page's own stack frame. Not-found, a client that leaves and ordinary requests
 * write no line. An unhandled rejection is logged and kept from ending the process (the entry
 * point's listener, `lib/cli/app.ts`).
 */
import assert from "node:assert/strict";
import { Suspense, use } from "react";
import { appFromEnv } from "../lib/cli/app.ts";
import { readSettings } from "../lib/cli/settings.ts";
import { type AppProps, eventStream, notFound, type PageProps } from "../lib/mod.ts";
import { captureLogs } from "shell/testing";
import { type AppFiles, memoryApp, memoryManifest } from "./helpers/app.ts";
import { PROJECT_ROOT } from "./helpers/project_copy.ts";
import { Later, laterTimers } from "./helpers/later.tsx";

const SECRET = "s3cret-f41lure";
const SERVER_MESSAGE =
  "Application error: a server-side exception has occurred while loading localhost (see the server logs for more information).";
const NOT_FOUND_PAGE = "<h1>Page not found</h1>";

/** Resolved when the slow shell's page starts rendering: the request is in the app by then. */
let slowShellStarted = Promise.withResolvers<void>();

function Broken(): never {
  throw new Error(`boundary: ${SECRET}`);
}

function Missing(): never {
  throw notFound();
}

const FAILING: AppFiles = {
  routes: {
    "_app.tsx": {
      default: function App({ Component, url }: AppProps) {
        if (url.pathname === "/fail/app") throw new Error(`app: ${SECRET}`);
        return (
          <html lang="en">
            <head>
              <meta charSet="utf-8" />
            </head>
            <body>
              <Component />
            </body>
          </html>
        );
      },
    },
    "_404.tsx": {
      default: function NotFound({ url }: PageProps) {
        if (url.pathname === "/fail/broken-404") throw new Error(`404 page: ${SECRET}`);
        return <h1>Page not found</h1>;
      },
    },
    // Before the shell: each answers 500 with the screen.
    "fail/handler.ts": {
      handler: {
        GET() {
          throw new Error(`handler: ${SECRET}`);
        },
      },
    },
    "fail/rejected.ts": {
      handler: { GET: () => Promise.reject(new Error(`rejected: ${SECRET}`)) },
    },
    "fail/string.ts": {
      handler: {
        GET() {
          throw `string: ${SECRET}`;
        },
      },
    },
    "fail/object.ts": {
      handler: {
        GET() {
          throw { reason: `object: ${SECRET}` };
        },
      },
    },
    "fail/long.ts": {
      handler: {
        GET() {
          throw new Error(`long: ${"x".repeat(5_000)} ${SECRET}`);
        },
      },
    },
    "fail/page.tsx": {
      default: function Page() {
        throw new TypeError(`page: ${SECRET}`);
      },
    },
    "fail/page-rejected.tsx": {
      default: () => <p>{use(Promise.reject(new Error(`page rejected: ${SECRET}`)))}</p>,
    },
    // A Suspense boundary that fails at once, before the shell is ready: still a 500.
    "fail/boundary.tsx": {
      default: () => (
        <Suspense fallback={<p>Loading…</p>}>
          <Broken />
        </Suspense>
      ),
    },
    "fail/boundary-missing.tsx": {
      default: () => (
        <Suspense fallback={<p>Loading…</p>}>
          <Missing />
        </Suspense>
      ),
    },
    "fail/layout/_layout.tsx": {
      default: function Layout() {
        throw new Error(`layout: ${SECRET}`);
      },
    },
    "fail/layout/index.tsx": { default: () => <p>never shown</p> },
    "fail/app.tsx": { default: () => <p>never shown</p> },
    // notFound() while rendering, before the shell: the status is still 404.
    "fail/gone.tsx": {
      default: function Gone(): never {
        throw notFound();
      },
    },
    "fail/missing.ts": {
      handler: {
        GET() {
          throw notFound();
        },
      },
    },
    // A shell that never gets ready: the client leaves first.
    "fail/slow-shell.tsx": {
      default: function SlowShell() {
        slowShellStarted.resolve();
        return <p>{use(new Promise<string>(() => {}))}</p>;
      },
    },
    // After the shell went out.
    "fail/stream.tsx": {
      default: () => (
        <>
          <h1>Before the failure</h1>
          <Suspense fallback={<p>Loading…</p>}>
            <Later fail={`stream: ${SECRET}`} />
          </Suspense>
          <Suspense fallback={<p>Loading slowly…</p>}>
            <Later ms={10_000} />
          </Suspense>
        </>
      ),
    },
    "fail/stream-missing.tsx": {
      default: () => (
        <>
          <h1>Still here</h1>
          <Suspense fallback={<p>Loading…</p>}>
            <Later notFound />
          </Suspense>
          <Suspense fallback={<p>Loading…</p>}>
            <Later ms={50} />
          </Suspense>
        </>
      ),
    },
    "fail/unhandled.ts": {
      handler: {
        GET() {
          Promise.reject(new Error(`unhandled: ${SECRET}`));
          return new Response("answered");
        },
      },
    },
    "about.tsx": { default: () => <h1>About</h1> },
  },
};

/** The screen's message and digest, from a response body. */
function screenOf(body: string): { message?: string; digest?: string } {
  return {
    message: body.match(/<h1>(.*?)<\/h1>/)?.[1],
    digest: body.match(/Digest: <code>([^<]+)<\/code>/)?.[1],
  };
}

function cspNonce(res: Response): string {
  const nonce = res.headers.get("content-security-policy")?.match(/'nonce-([^']+)'/)?.[1];
  assert.ok(nonce, "the CSP names a nonce");
  return nonce;
}

const SERVER_FAILURES = [
  { kind: "a handler that throws", path: "/fail/handler", name: "Error" },
  { kind: "a handler's rejected promise", path: "/fail/rejected", name: "Error" },
  { kind: "a thrown string", path: "/fail/string", name: "NonError" },
  { kind: "a thrown plain object", path: "/fail/object", name: "NonError" },
  { kind: "a page that throws while rendering", path: "/fail/page", name: "TypeError" },
  { kind: "a page whose promise rejects", path: "/fail/page-rejected", name: "Error" },
  { kind: "a Suspense boundary that throws at once", path: "/fail/boundary", name: "Error" },
  { kind: "a layout that throws", path: "/fail/layout", name: "Error" },
  { kind: "an _app that throws", path: "/fail/app", name: "Error" },
  { kind: "a _404.tsx that throws", path: "/fail/broken-404", name: "Error" },
];

Deno.test("server failures in production", async (t) => {
  using logs = captureLogs();
  using _timers = laterTimers();
  const app = memoryApp(FAILING);
  // In-process, a request's lines are written by the time its body has been read.
  const get = async (path: string, init?: RequestInit) => {
    const res = await app.request(path, init);
    return { res, body: await res.text() };
  };
  const linesFor = (path: string) => logs.lines.filter((line) => line.path === path);

  for (const { kind, path, name } of SERVER_FAILURES) {
    await t.step(`${kind}: 500, the screen, one log line with its digest`, async () => {
      const { res, body } = await get(path);
      assert.equal(res.status, 500);
      assert.match(res.headers.get("content-type")!, /^text\/html/);
      assert.equal(res.headers.get("cache-control"), "no-store");
      const { message, digest } = screenOf(body);
      assert.equal(message, SERVER_MESSAGE);
      assert.ok(digest, "the screen shows a digest");
      assert.ok(!body.includes(SECRET), "the error's message stays out of the response");
      assert.ok(!body.includes("<pre>"), "no stack in production");

      const lines = linesFor(path);
      assert.equal(lines.length, 1, "exactly one line for one failure");
      const [line] = lines;
      assert.equal(line.digest, digest);
      assert.equal(line.level, "error");
      assert.equal(line.method, "GET");
      // The route that failed: each path here is its own route, but for the not-found page.
      assert.equal(line.route, path === "/fail/broken-404" ? null : path);
      assert.equal(line.status, 500);
      assert.equal(line.request_id, res.headers.get("x-request-id"));
      assert.match(String(line.request_id), /^[0-9a-f-]{36}$/);
      assert.equal(line.trace_id, null);
      assert.equal(line.sentry_event_id, null);
      assert.equal(line.error.name, name);
      assert.ok(line.error.message.includes(SECRET));
      assert.equal(typeof line.error.stack, "string");
      assert.equal(line.msg, `${name}: ${line.error.message}`);
    });
  }

  await t.step("the same failure gets the same digest, another failure another", async () => {
    const again = screenOf((await get("/fail/handler")).body).digest;
    const [first] = linesFor("/fail/handler");
    assert.equal(again, first.digest);
    const [other] = linesFor("/fail/page");
    assert.ok(other?.digest, "the other failure was logged with a digest");
    assert.notEqual(other.digest, again);
  });

  await t.step("a long message: the digest stays near the start of the line", async () => {
    const from = logs.raw.length;
    const digest = screenOf((await get("/fail/long")).body).digest!;
    const [line] = linesFor("/fail/long");
    assert.equal(line.digest, digest);
    assert.equal(line.msg.length, 200, "the headline is cut short");
    assert.equal(line.error.message.length, "long: ".length + 5_001 + SECRET.length);
    const [raw] = logs.raw.slice(from);
    assert.ok(raw.includes(digest));
    assert.ok(raw.indexOf(digest) < 300, "within what any log service keeps");
  });

  await t.step("unknown URLs and notFound() answer 404 and are not failures", async () => {
    for (const path of ["/no/such/page", "/fail/gone", "/fail/boundary-missing"]) {
      const { res, body } = await get(path);
      assert.equal(res.status, 404);
      assert.ok(body.includes(NOT_FOUND_PAGE));
      assert.deepEqual(linesFor(path), []);
    }
    // An API route's (a handler, no page) is JSON.
    const { res, body } = await get("/fail/missing");
    assert.equal(res.status, 404);
    assert.deepEqual(JSON.parse(body), { error: { status: 404, message: "Not Found" } });
    assert.deepEqual(linesFor("/fail/missing"), []);
  });

  await t.step("a client that leaves before the shell is ready is not a failure", async () => {
    slowShellStarted = Promise.withResolvers();
    const leaving = new AbortController();
    const answer = app.request("/fail/slow-shell", { signal: leaving.signal });
    await slowShellStarted.promise;
    leaving.abort();
    const res = await answer;
    assert.equal(res.status, 499, "answered as a client that closed the request");
    await res.body?.cancel();
    assert.deepEqual(linesFor("/fail/slow-shell"), []);
  });

  await t.step("ordinary requests write nothing to stdout by default", async () => {
    const before = logs.lines.length;
    const { res } = await get("/about");
    assert.equal(res.status, 200);
    assert.equal(logs.lines.length, before);
  });

  await t.step("a boundary failing after the shell ends the page with the screen", async () => {
    const { res, body } = await get("/fail/stream");
    assert.equal(res.status, 200, "the status went out with the shell");
    assert.ok(body.includes("<h1>Before the failure</h1>"), "the shell was sent");
    assert.ok(!body.includes(SECRET));
    assert.ok(!body.includes("Arrived"), "the render stopped: the slow boundary never streamed");

    const tail = body.match(
      /<script nonce="([^"]+)">([^<]*)<\/script>(<noscript [^]*<\/noscript>)$/,
    );
    assert.ok(tail, "the body ends with a script, and a screen for browsers without JavaScript");
    assert.equal(tail[1], cspNonce(res), "which carries the request's nonce");
    assert.ok(tail[2].includes(SERVER_MESSAGE));
    const digest = tail[2].match(/Digest: \\u003ccode>([^\\]+)\\u003c\/code>/)?.[1];
    assert.ok(digest, "the script's screen shows a digest");
    assert.ok(tail[3].includes(`<h1>${SERVER_MESSAGE}</h1><p>Digest: <code>${digest}</code>`));
    assert.ok(tail[3].includes(`<style nonce="${tail[1]}">`));

    const lines = linesFor("/fail/stream");
    assert.equal(lines.length, 1);
    assert.equal(lines[0].digest, digest);
    assert.ok(lines[0].error.message.includes(SECRET));
  });

  await t.step(
    "notFound() after the shell: not a failure, the page is marked noindex",
    async () => {
      const { res, body } = await get("/fail/stream-missing");
      assert.equal(res.status, 200);
      assert.ok(body.includes("Arrived"), "the rest of the page streamed on");
      assert.ok(body.includes(
        `<script nonce="${cspNonce(res)}">document.head.append(Object.assign(` +
          `document.createElement("meta"),{name:"robots",content:"noindex"}))</script>`,
      ));
      // `_404.tsx` takes the boundary's place (tests/expected_errors_test.tsx).
      assert.match(body, /<template id="app-error-0-html"><h1>Page not found<\/h1><\/template>/);
      assert.deepEqual(linesFor("/fail/stream-missing"), []);
    },
  );
});

Deno.test("server failures in development show the message and the stack", async () => {
  using logs = captureLogs();
  // Its modules are this file's: stacks are shown relative to the project's root.
  const res = await memoryApp(FAILING, { dev: true, root: PROJECT_ROOT }).request("/fail/page");
  const body = await res.text();
  assert.equal(res.status, 500);
  const { message, digest } = screenOf(body);
  assert.equal(message, SERVER_MESSAGE);
  // The page component's own frame, relative to the project root, and not React's internals.
  const details = body.match(/<pre>([^<]*)<\/pre>/)?.[1];
  assert.match(
    details!,
    /^TypeError: page: s3cret-f41lure\n {4}at Page \(tests\/failures_test\.tsx:\d+:\d+\)$/,
  );
  const [line] = logs.lines.filter((l) => l.path === "/fail/page");
  assert.equal(line.digest, digest);
});

Deno.test("an unhandled rejection is logged with a digest and does not end the process", async () => {
  using logs = captureLogs();
  // The entry points' app (`main.ts`, `lib/cli/start.ts`): it installs the process's listener.
  // A store in memory: never the project's `.data/`.
  const settings = readSettings((name) => name === "KV_PATH" ? ":memory:" : undefined);
  const { app } = await appFromEnv(memoryManifest(FAILING), settings);
  const seen = Promise.withResolvers<PromiseRejectionEvent>();
  // Listeners run in the order added: by the time this one runs, the app's has.
  addEventListener("unhandledrejection", (event) => seen.resolve(event), { once: true });
  const res = await app.request("/fail/unhandled");
  assert.equal(await res.text(), "answered");
  const event = await seen.promise;
  assert.ok(event.defaultPrevented, "Deno would end the process on it otherwise");
  const line = logs.lines.find((l) => String(l.msg).startsWith("Unhandled rejection: Error"));
  assert.ok(line, "logged");
  assert.equal(line.msg, `Unhandled rejection: Error: unhandled: ${SECRET}`);
  assert.match(line.digest, /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
  assert.equal(line.level, "error");
  assert.ok(line.error.message.includes(SECRET));
  const after = await app.request("/about");
  assert.equal(after.status, 200);
  await after.body?.cancel();
});

Deno.test("two routes whose calls time out get two digests, each the same every time", async () => {
  using logs = captureLogs();
  // An `AbortSignal.timeout` fires in Deno's timer: the error holds no frame of the route's code.
  const timesOut = {
    handler: {
      async GET(): Promise<Response> {
        const signal = AbortSignal.timeout(1);
        await new Promise((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason))
        );
        return new Response("not reached");
      },
    },
  };
  const app = memoryApp({ routes: { "rates.ts": timesOut, "payments.ts": timesOut } });
  const digests: Record<string, string> = {};
  for (const path of ["/rates", "/payments", "/rates"]) {
    const res = await app.request(path);
    assert.equal(res.status, 500);
    const { digest } = screenOf(await res.text());
    assert.ok(digest);
    assert.equal(digests[path] ?? digest, digest, `${path}: the same failure, the same digest`);
    digests[path] = digest;
    assert.equal(logs.of(res)[0].digest, digest);
  }
  assert.notEqual(digests["/rates"], digests["/payments"]);
  await app.close();
});

Deno.test("two routes whose event streams' calls time out log two digests, each the same every time", async () => {
  using logs = captureLogs();
  // As above, for a live page's source: its failure ends the stream and is logged with a digest.
  const timesOut = {
    handler: {
      GET: (req: Request, ctx: Parameters<typeof eventStream>[1]) =>
        eventStream(req, ctx, async function* () {
          const signal = AbortSignal.timeout(1);
          await new Promise((_, reject) =>
            signal.addEventListener("abort", () => reject(signal.reason))
          );
          yield { data: "not reached" };
        }),
    },
  };
  const app = memoryApp({ routes: { "rates.ts": timesOut, "payments.ts": timesOut } });
  const digests: Record<string, string> = {};
  for (const path of ["/rates", "/payments", "/rates"]) {
    const before = logs.lines.length;
    const res = await app.request(path);
    assert.equal(res.status, 200);
    await res.text(); // the stream ends with its source's failure
    const failed = logs.lines.slice(before).filter((line) => line.level === "error");
    assert.equal(failed.length, 1, path);
    const digest = String(failed[0].digest);
    assert.equal(digests[path] ?? digest, digest, `${path}: the same failure, the same digest`);
    digests[path] = digest;
  }
  assert.notEqual(digests["/rates"], digests["/payments"]);
  await app.close();
});
