/**
 * The dev loop's parts on their own (the whole loop runs in Chromium in `e2e/dev_test.ts`): stacks
 * cut to the app's frames, the dev client added to pages and nothing else, a request crossing from
 * the dev server to the app's as the browser sent it, and what a rebuild means for open pages.
 */
import assert from "node:assert/strict";
import type * as esbuild from "esbuild";
import { behindDevFront, forward } from "../lib/dev/forwarding.ts";
import { withDevClient } from "../lib/dev/inject.ts";
import { planUpdate } from "../lib/dev/updates.ts";
import { appStack } from "../lib/errors/frames.ts";

Deno.test("a dev stack keeps the app's frames, relative, without Deno's wrapper", () => {
  const root = "/work/app/";
  assert.equal(
    appStack(
      [
        "TypeError: no clock",
        "    at load (file:///work/app/routes/api/time.ts:2:33)",
        "    at GET (file:///work/app/routes/api/time.ts:3:87)",
        "    at async file:///work/app/lib/server/routes.ts:69:25",
        "    at async dispatch (file:///deps/node_modules/hono/dist/compose.js:35:11)",
        "    at new Promise (<anonymous>)",
        "    at ext:core/01_core.js:1:2",
      ].join("\n"),
      root,
    ),
    "TypeError: no clock\n    at load (routes/api/time.ts:2:33)\n    at GET (routes/api/time.ts:3:87)",
  );
  // An app's own module at the top of lib/ is the app's.
  assert.equal(
    appStack("Error: x\n    at f (file:///work/app/lib/guestbook.ts:1:2)", root),
    "Error: x\n    at f (lib/guestbook.ts:1:2)",
  );
  assert.equal(
    appStack(
      "TypeError: SyntaxError: Expected ',', got 'start'\n   |\n10 |   start={3}\n   |   ~~~~~\n" +
        "    at file:///work/app/routes/counter.tsx:10:9\n" +
        "    at async file:///work/app/lib/cli/start.ts:28:29",
      root,
    ),
    "SyntaxError: Expected ',', got 'start'\n   |\n10 |   start={3}\n   |   ~~~~~\n" +
      "    at routes/counter.tsx:10:9",
  );
  // Nothing of the app's: the framework's frames say where it broke.
  assert.equal(
    appStack(
      "Error: routes/x.tsx has no default export\n" +
        "    at render (file:///work/app/lib/server/app.tsx:117:26)\n" +
        "    at async dispatch (file:///deps/node_modules/hono/dist/compose.js:35:11)",
      root,
    ),
    "Error: routes/x.tsx has no default export\n    at render (lib/server/app.tsx:117:26)",
  );
  assert.equal(appStack("oops"), "oops");
});

const TAG = '<script type="module" async src="/_app/dev/client.js"></script>';
const PAGE_LOAD = { "Sec-Fetch-Dest": "document" };

function injected(chunks: string[], type: string, headers: HeadersInit = PAGE_LOAD): Response {
  const encoder = new TextEncoder();
  const body = ReadableStream.from(chunks.map((chunk) => encoder.encode(chunk)));
  const res = new Response(body, {
    status: 401,
    headers: { "Content-Type": type, "Content-Length": "1", "X-Kept": "yes" },
  });
  return withDevClient(new Request("http://app.test/", { headers }), res, TAG);
}

Deno.test("the dev client goes right after <head>, wherever the chunks split", async () => {
  const res = injected(
    ['<!DOCTYPE html><html lang="é"><he', 'ad data-x="1">', "<title>ü</title></head>…"],
    "text/html; charset=utf-8",
  );
  assert.equal(
    await res.text(),
    `<!DOCTYPE html><html lang="é"><head data-x="1">${TAG}<title>ü</title></head>…`,
  );
  assert.equal(res.status, 401);
  assert.equal(res.headers.get("X-Kept"), "yes");
  assert.equal(res.headers.get("Content-Length"), null);
  // A fragment with no <head>: at the end.
  assert.equal(await injected(["<p>", "hi</p>"], "text/html").text(), `<p>hi</p>${TAG}`);
  // Without Sec-Fetch-* (plain HTTP off localhost): a browser loading a page asks for HTML.
  const plain = injected(["<head>"], "text/html", { Accept: "text/html,*/*" });
  assert.equal(await plain.text(), `<head>${TAG}`);
});

Deno.test("a plain-text answer to a page load becomes the same text in a page", async () => {
  const res = injected(["Unauthorized <", "b>"], "text/plain; charset=utf-8");
  assert.equal(res.headers.get("Content-Type"), "text/html; charset=utf-8");
  const html = await res.text();
  assert.ok(html.includes(`<head>${TAG}`), html);
  assert.match(html, /<pre[^>]*>Unauthorized &lt;b&gt;<\/pre>/);
});

Deno.test("what a script fetches is left as the app answered it", async () => {
  for (const headers of [{ "Sec-Fetch-Dest": "empty" }, { Accept: "*/*" }] as HeadersInit[]) {
    for (const type of ["text/html", "text/plain"]) {
      const res = injected(["<head>x"], type, headers);
      assert.equal(await res.text(), "<head>x");
      assert.equal(res.headers.get("Content-Length"), "1");
    }
  }
});

Deno.test("a request reaches the app's server as the browser sent it", async () => {
  const seen: { url: string; host: string | null; client: string; token: string | null }[] = [];
  const app = behindDevFront((req, info) => {
    const addr = info.remoteAddr as Deno.NetAddr;
    seen.push({
      url: req.url,
      host: new URL(req.url).host,
      client: `${addr.hostname}:${addr.port}`,
      token: req.headers.get("x-dev-front-token"),
    });
    return new Response(req.method === "POST" ? req.body : "ok", { status: 201 });
  }, "secret");
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app);
  const origin = `http://127.0.0.1:${server.addr.port}`;
  const info = {
    remoteAddr: { transport: "tcp", hostname: "192.0.2.7", port: 4242 },
    completed: Promise.resolve(),
  } as Deno.ServeHandlerInfo;

  const res = await forward(
    new Request("http://localhost:8000/guestbook?page=2", {
      method: "POST",
      headers: { Origin: "http://localhost:8000" },
      body: "name=Ada",
    }),
    info,
    origin,
    "secret",
  );
  assert.equal(res.status, 201);
  assert.equal(await res.text(), "name=Ada");
  assert.deepEqual(seen, [{
    url: "http://localhost:8000/guestbook?page=2",
    host: "localhost:8000",
    client: "192.0.2.7:4242",
    token: null,
  }]);

  // Anyone else on the loopback port is turned away.
  const stranger = await fetch(origin + "/", {
    headers: { "x-dev-front-token": "guess", "x-dev-front-url": "http://localhost:8000/" },
  });
  assert.equal(stranger.status, 421);
  await stranger.body?.cancel();
  assert.equal(seen.length, 1);
});

Deno.test("a rebuild swaps changed islands in place, or reloads for the boot runtime", () => {
  const metafile = (outputs: Record<string, [string | undefined, string[], string[]]>) =>
    ({
      inputs: {},
      outputs: Object.fromEntries(
        Object.entries(outputs).map(([path, [entryPoint, inputs, imports]]) => [path, {
          entryPoint,
          inputs: Object.fromEntries(inputs.map((input) => [input, { bytesInOutput: 1 }])),
          imports: imports.map((path) => ({ path, kind: "import-statement" })),
          exports: [],
          bytes: 1,
        }]),
      ),
    }) as unknown as esbuild.Metafile;
  const out = "_build/dev/static";
  const islands = new Map([["Counter", "islands/Counter.tsx"], ["Clock", "islands/Clock.tsx"]]);
  const before = metafile({
    [`${out}/boot-A.js`]: ["lib/client/boot.ts", ["lib/client/boot.ts"], []],
    [`${out}/Counter-A.js`]: ["islands/Counter.tsx", ["islands/Counter.tsx"], [
      `${out}/chunk-A.js`,
    ]],
    [`${out}/Clock-A.js`]: ["islands/Clock.tsx", ["islands/Clock.tsx"], [`${out}/chunk-A.js`]],
    [`${out}/chunk-A.js`]: [undefined, ["components/Badge.tsx"], []],
  });
  // Badge, in a chunk both islands import, changed: both swap, and Badge must refresh in place.
  const after = metafile({
    [`${out}/boot-A.js`]: ["lib/client/boot.ts", ["lib/client/boot.ts"], []],
    [`${out}/Counter-B.js`]: ["islands/Counter.tsx", ["islands/Counter.tsx"], [
      `${out}/chunk-B.js`,
    ]],
    [`${out}/Clock-B.js`]: ["islands/Clock.tsx", ["islands/Clock.tsx"], [`${out}/chunk-B.js`]],
    [`${out}/chunk-B.js`]: [undefined, ["components/Badge.tsx"], []],
  });
  assert.deepEqual(planUpdate(before, after, islands, ["components/Badge.tsx"], out), {
    update: {
      islands: {
        Counter: { url: "/_app/Counter-B.js", files: ["components/Badge.tsx"] },
        Clock: { url: "/_app/Clock-B.js", files: ["components/Badge.tsx"] },
      },
    },
  });
  // Two islands saved at once: each checks its own file, a page that shows one needs only that.
  const both = metafile({
    [`${out}/boot-A.js`]: ["lib/client/boot.ts", ["lib/client/boot.ts"], []],
    [`${out}/Counter-C.js`]: ["islands/Counter.tsx", ["islands/Counter.tsx"], [
      `${out}/chunk-B.js`,
    ]],
    [`${out}/Clock-C.js`]: ["islands/Clock.tsx", ["islands/Clock.tsx"], [`${out}/chunk-B.js`]],
    [`${out}/chunk-B.js`]: [undefined, ["components/Badge.tsx"], []],
  });
  assert.deepEqual(
    planUpdate(after, both, islands, ["islands/Counter.tsx", "islands/Clock.tsx"], out),
    {
      update: {
        islands: {
          Counter: { url: "/_app/Counter-C.js", files: ["islands/Counter.tsx"] },
          Clock: { url: "/_app/Clock-C.js", files: ["islands/Clock.tsx"] },
        },
      },
    },
  );
  const rebooted = metafile({
    [`${out}/boot-B.js`]: ["lib/client/boot.ts", ["lib/client/boot.ts"], []],
    [`${out}/Counter-B.js`]: ["islands/Counter.tsx", ["islands/Counter.tsx"], [
      `${out}/chunk-B.js`,
    ]],
    [`${out}/Clock-B.js`]: ["islands/Clock.tsx", ["islands/Clock.tsx"], [`${out}/chunk-B.js`]],
    [`${out}/chunk-B.js`]: [undefined, ["components/Badge.tsx"], []],
  });
  assert.deepEqual(planUpdate(after, rebooted, islands, ["lib/client/boot.ts"], out), {
    reload: "lib/client/boot.ts changed",
  });
});
