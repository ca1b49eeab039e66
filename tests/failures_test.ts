/**
 * @module
 * Server failures over real HTTP, against a copy of the project with failing routes: each kind
 * answers with the server-side screen, whose digest is the one in the single JSON line the
 * failure wrote to stdout, and no production response ever holds the error's message.
 */
import assert from "node:assert/strict";
import { failingProject, SECRET } from "./helpers/failing_app.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

const SERVER_MESSAGE =
  "Application error: a server-side exception has occurred while loading 127.0.0.1 (see the server logs for more information).";

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

/** The failure lines logged for `path`, once the first is in and a moment for any second. */
async function failureLines(server: TestServer, path: string) {
  await server.waitForLog((line) => line.path === path && line.level === "error");
  await new Promise((resolve) => setTimeout(resolve, 150));
  return server.logs().filter((line) => line.path === path);
}

async function assertNoLogLine(server: TestServer, path: string) {
  // A failure requested afterwards: once its line is in, a line for `path` would be too.
  const res = await server.fetch("/fail/handler");
  await res.body?.cancel();
  const id = res.headers.get("x-request-id");
  await server.waitForLog((line) => line.request_id === id);
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.deepEqual(server.logs().filter((line) => line.path === path), []);
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
  await using copy = await failingProject();
  await using server = await startServer({ NODE_ENV: "production" }, { root: copy.root });

  for (const { kind, path, name } of SERVER_FAILURES) {
    await t.step(`${kind}: 500, the screen, one log line with its digest`, async () => {
      const res = await server.fetch(path);
      const body = await res.text();
      assert.equal(res.status, 500);
      assert.match(res.headers.get("content-type")!, /^text\/html/);
      assert.equal(res.headers.get("cache-control"), "no-store");
      const { message, digest } = screenOf(body);
      assert.equal(message, SERVER_MESSAGE);
      assert.ok(digest, "the screen shows a digest");
      assert.ok(!body.includes(SECRET), "the error's message stays out of the response");
      assert.ok(!body.includes("<pre>"), "no stack in production");

      const lines = await failureLines(server, path);
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
      const error = line.error as Record<string, string>;
      assert.equal(error.name, name);
      assert.ok(error.message.includes(SECRET));
      assert.equal(typeof error.stack, "string");
      assert.equal(line.msg, `${name}: ${error.message}`);
    });
  }

  await t.step("the same failure gets the same digest, another failure another", async () => {
    const again = screenOf(await (await server.fetch("/fail/handler")).text()).digest;
    const [first] = server.logs().filter((line) => line.path === "/fail/handler");
    assert.equal(again, first.digest);
    const other = server.logs().find((line) => line.path === "/fail/page");
    assert.notEqual(other?.digest, again);
  });

  await t.step("a long message: the digest stays near the start of the line", async () => {
    const digest = screenOf(await (await server.fetch("/fail/long")).text()).digest!;
    const [line] = await failureLines(server, "/fail/long");
    assert.equal(line.digest, digest);
    assert.equal((line.msg as string).length, 200, "the headline is cut short");
    assert.equal(
      (line.error as Record<string, string>).message.length,
      "long: ".length + 5_001 + SECRET.length,
    );
    const raw = server.stdout.find((text) => text.includes(digest))!;
    assert.ok(raw.indexOf(digest) < 300, "within what any log service keeps");
  });

  await t.step("an unhandled rejection is logged with a digest; the server lives on", async () => {
    const res = await server.fetch("/fail/unhandled");
    assert.equal(await res.text(), "answered");
    const line = await server.waitForLog((l) =>
      String(l.msg).startsWith("Unhandled rejection: Error: unhandled")
    );
    assert.match(String(line.digest), /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
    assert.equal(line.level, "error");
    assert.ok((line.error as Record<string, string>).message.includes(SECRET));
    assert.equal((await server.fetch("/about")).status, 200);
  });

  await t.step("unknown URLs and notFound() answer 404 and are not failures", async () => {
    for (const path of ["/no/such/page", "/fail/missing", "/fail/boundary-missing"]) {
      const res = await server.fetch(path);
      assert.equal(res.status, 404);
      assert.ok((await res.text()).includes("<h1>Page not found</h1>"));
      await assertNoLogLine(server, path);
    }
  });

  await t.step("a client that leaves before the shell is ready is not a failure", async () => {
    await server.fetch("/fail/slow-shell", { signal: AbortSignal.timeout(200) }).then(
      () => assert.fail("the shell took 3 s"),
      (error) => assert.equal(error.name, "TimeoutError"),
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // the server sees the close
    await assertNoLogLine(server, "/fail/slow-shell");
  });

  await t.step("ordinary requests write nothing to stdout by default", async () => {
    await (await server.fetch("/")).body?.cancel();
    await assertNoLogLine(server, "/");
  });

  await t.step("a boundary failing after the shell ends the page with the screen", async () => {
    const res = await server.fetch("/fail/stream");
    assert.equal(res.status, 200, "the status went out with the shell");
    const body = await res.text();
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
    assert.ok(tail[3].includes(`<h1>${SERVER_MESSAGE}</h1><p>Digest: <code>${digest}</code>`));
    assert.ok(tail[3].includes(`<style nonce="${tail[1]}">`));

    const lines = await failureLines(server, "/fail/stream");
    assert.equal(lines.length, 1);
    assert.equal(lines[0].digest, digest);
    assert.ok((lines[0].error as Record<string, string>).message.includes(SECRET));
  });

  await t.step(
    "notFound() after the shell: not a failure, the page is marked noindex",
    async () => {
      const res = await server.fetch("/fail/stream-missing");
      assert.equal(res.status, 200);
      const body = await res.text();
      assert.ok(body.includes("Arrived"), "the rest of the page streamed on");
      assert.ok(body.endsWith(
        `<script nonce="${cspNonce(res)}">document.head.append(Object.assign(` +
          `document.createElement("meta"),{name:"robots",content:"noindex"}))</script>`,
      ));
      await assertNoLogLine(server, "/fail/stream-missing");
    },
  );
});

Deno.test("server failures in development show the message and the stack", async () => {
  await using copy = await failingProject();
  await using server = await startServer({ NODE_ENV: "development" }, { root: copy.root });
  const res = await server.fetch("/fail/page");
  const body = await res.text();
  assert.equal(res.status, 500);
  const { message, digest } = screenOf(body);
  assert.equal(message, SERVER_MESSAGE);
  // The page component's own file and line (source-mapped from the .tsx), not React's internals.
  const details = body.match(/<pre>([^<]*)<\/pre>/)?.[1];
  assert.equal(
    details,
    `TypeError: page: ${SECRET}\n    at Page (routes/fail/page.tsx:3:13)`,
  );
  const [line] = await failureLines(server, "/fail/page");
  assert.equal(line.digest, digest);
});
