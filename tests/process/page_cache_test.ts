/**
 * @module
 * The shared page cache across processes, on a built copy of the test app with a cached page and a
 * handler that revalidates its tag. `deno serve --parallel` with two workers on one KV file: a page
 * rendered by one worker is answered by the other from KV without rendering again, and a tag
 * revalidated on one worker reaches the other by the push (tag_push.ts) — with a tag check of a
 * minute, so nothing else could. Two `deno serve` processes on one file, which the push does not
 * cross: the tag check (`PAGE_CACHE_TAG_CHECK_MS`) brings it to the other. No timed assertions:
 * each waits, boundedly, for every worker to serve the new page. A burst of first requests across
 * both workers renders a page once (the page's lease in KV). A page written while another process
 * holds SQLite's write lock (as a worker writing its build's assets at start does) is stored once
 * the lock is let go, not dropped.
 */
import assert from "node:assert/strict";
import { sharedLayer } from "../../lib/cache/shared.ts";
import type { StoredPage } from "../../lib/cache/entry.ts";
import { memoryApp } from "../helpers/app.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { holdWriteLock, tempStore } from "../helpers/kv.ts";
import { serveParallel, WORKER_NAMING_MIDDLEWARE } from "../helpers/parallel.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

export const CACHED_FILES = {
  "routes/_middleware.ts": WORKER_NAMING_MIDDLEWARE,
  "routes/cached.tsx": `import { kvOf } from "shell/data";
    export const cache = { maxAge: 600, tags: ["wall"] };
    export const handler = {
      async GET(_req, ctx) {
        const kv = kvOf(ctx);
        await kv.atomic().sum(["renders"], 1n).commit();
        const version = (await kv.get(["version"])).value ?? 0;
        return ctx.render(version);
      },
    };
    export default function Cached({ data }) {
      return <p id="version">version {String(data)}</p>;
    }`,
  "routes/api/publish.ts": `import { revalidateTag } from "shell";
    import { kvOf } from "shell/data";
    export const handler = {
      async POST(_req, ctx) {
        const kv = kvOf(ctx);
        const version = ((await kv.get(["version"])).value ?? 0) + 1;
        await kv.set(["version"], version);
        await revalidateTag("wall", ctx);
        return Response.json({ version });
      },
    };`,
  "routes/api/renders.ts": `import { kvOf } from "shell/data";
    export const handler = {
      async GET(req, ctx) {
        const n = new URL(req.url).searchParams.get("slow");
        const key = n === null ? ["renders"] : ["slow-renders", n];
        return Response.json({ renders: String((await kvOf(ctx).get(key)).value?.value ?? 0n) });
      },
    };`,
  // A page a moment long to render, one per \`n\`: a burst of first requests finds it rendering.
  "routes/slow.tsx": `import { kvOf } from "shell/data";
    export const cache = { maxAge: 600 };
    export const handler = {
      async GET(req, ctx) {
        const n = new URL(req.url).searchParams.get("n") ?? "";
        await kvOf(ctx).atomic().sum(["slow-renders", n], 1n).commit();
        await new Promise((resolve) => setTimeout(resolve, 300));
        return ctx.render(n);
      },
    };
    export default function Slow({ data }) {
      return <p id="slow">slow {data}</p>;
    }`,
};

/**
 * Loads `/cached` until `workers` workers served a page showing `version` (400 loads at most); the
 * workers that did.
 */
async function servedBy(
  server: TestServer,
  client: Deno.HttpClient,
  version: number,
  workers = 1,
): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < 400 && seen.size < workers; i++) {
    const res = await fetch(server.origin + "/cached", { client });
    const html = (await res.text()).replaceAll("<!-- -->", "");
    if (html.includes(`version ${version}`)) seen.add(res.headers.get("x-worker")!);
    else await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return seen;
}

Deno.test("deno serve --parallel: a cached page renders once for both workers, and revalidateTag reaches both", async (t) => {
  const root = await builtCopy("page-cache", CACHED_FILES);
  await using store = await tempStore();
  const kvPath = store.path;
  await using server = await serveParallel(root, (port) => ({
    KV_PATH: kvPath,
    APP_ORIGIN: `http://127.0.0.1:${port}`,
    // A minute: a worker that saw the revalidation before that was told by the push.
    PAGE_CACHE_TAG_CHECK_MS: "60000",
  }));
  using client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  const load = async () => {
    const res = await fetch(server.origin + "/cached", { client });
    return {
      worker: res.headers.get("x-worker")!,
      state: res.headers.get("x-cache"),
      html: (await res.text()).replaceAll("<!-- -->", ""),
    };
  };
  const renders = async () =>
    Number((await (await fetch(server.origin + "/api/renders", { client })).json()).renders);
  /**
   * Loads until both workers answered `min` times at least each; bounded by 30 s, loads 10 ms apart
   * after the first 20: on a loaded machine the second worker may still be starting.
   */
  const fromBoth = async (min: number) => {
    const seen = new Map<string, Awaited<ReturnType<typeof load>>[]>();
    const end = performance.now() + 30_000;
    for (let i = 0; performance.now() < end; i++) {
      const answer = await load();
      seen.set(answer.worker, [...(seen.get(answer.worker) ?? []), answer]);
      if (seen.size === 2 && [...seen.values()].every((list) => list.length >= min)) return seen;
      if (i >= 20) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`30 s of loads, and not both workers answered ${min} times`);
  };

  await t.step("rendered once, answered by both workers", async () => {
    const first = await load();
    assert.equal(first.state, "MISS");
    assert.match(first.html, /version 0/);
    const seen = await fromBoth(3);
    for (const answers of seen.values()) {
      for (const { state, html } of answers) {
        assert.equal(state, "HIT");
        assert.match(html, /version 0/);
      }
    }
    assert.equal(await renders(), 1);
  });

  await t.step("revalidateTag on one worker: both serve the new page, rendered again", async () => {
    const published = await fetch(server.origin + "/api/publish", { method: "POST", client });
    assert.deepEqual(await published.json(), { version: 1 });
    // Loads go on until both workers served it: long before the minute of the tag check.
    const seen = await servedBy(server, client, 1, 2);
    assert.equal(seen.size, 2, "both workers serve version 1");
    const after = await fromBoth(2);
    for (const answers of after.values()) {
      for (const { html } of answers) assert.match(html, /version 1/);
    }
    assert.ok(await renders() <= 3, "rendered again once per worker at most");
  });
});

Deno.test("two processes on one KV file: the tag check carries revalidateTag where the push does not reach", async () => {
  const root = await builtCopy("page-cache", CACHED_FILES);
  await using store = await tempStore();
  const kvPath = store.path;
  const serve = () =>
    startServer((port) => ({ KV_PATH: kvPath, APP_ORIGIN: `http://127.0.0.1:${port}` }), {
      root,
      args: (port) => ["serve", "-A", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
    });
  await using one = await serve();
  await using other = await serve();
  using client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  for (const server of [one, other]) assert.equal((await servedBy(server, client, 0)).size, 1);
  const published = await fetch(one.origin + "/api/publish", { method: "POST", client });
  assert.deepEqual(await published.json(), { version: 1 });
  assert.equal((await servedBy(one, client, 1)).size, 1, "the process that revalidated");
  assert.equal((await servedBy(other, client, 1)).size, 1, "the other, by its tag check");
});

Deno.test("deno serve --parallel: concurrent first requests across both workers render a page once", async () => {
  const root = await builtCopy("page-cache", CACHED_FILES);
  await using store = await tempStore();
  const kvPath = store.path;
  await using server = await serveParallel(root, (port) => ({
    KV_PATH: kvPath,
    APP_ORIGIN: `http://127.0.0.1:${port}`,
  }));
  using client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  const renders = async (n: number) => {
    const res = await fetch(`${server.origin}/api/renders?slow=${n}`, { client });
    return { renders: Number((await res.json()).renders), worker: res.headers.get("x-worker") };
  };
  // Both workers up first (on a loaded machine the second may still be starting): 30 s at most.
  const up = new Set<string>();
  const end = performance.now() + 30_000;
  while (up.size < 2 && performance.now() < end) up.add((await renders(-1)).worker!);
  assert.equal(up.size, 2, "both workers answer");
  // Each burst on a page of its own, until one reached both workers (the kernel spreads new
  // connections between them): every burst renders its page once.
  let reachedBoth = false;
  for (let n = 0; n < 8 && !reachedBoth; n++) {
    const answers = await Promise.all(Array.from({ length: 12 }, async () => {
      const res = await fetch(`${server.origin}/slow?n=${n}`, { client });
      const html = (await res.text()).replaceAll("<!-- -->", "");
      return { status: res.status, html, worker: res.headers.get("x-worker")! };
    }));
    for (const { status, html } of answers) {
      assert.equal(status, 200);
      assert.match(html, new RegExp(`slow ${n}<`));
    }
    assert.equal((await renders(n)).renders, 1, `burst ${n}: twelve requests, one render`);
    reachedBoth = new Set(answers.map(({ worker }) => worker)).size === 2;
  }
  assert.ok(reachedBoth, "a burst reached both workers");
});

const ORIGIN = "https://app.example";

/** A stored page as the cache makes one. */
function storedPage(key: string): StoredPage {
  return {
    key,
    body: new TextEncoder().encode("<p>stored while locked</p>"),
    nonce: "",
    etag: 'W/"x"',
    headers: [["content-type", "text/html; charset=utf-8"]],
    storedAt: Date.now(),
    maxAge: 60,
    staleWhileRevalidate: 0,
    tags: {},
  };
}

Deno.test("another process holds KV's write lock: a page written meanwhile is stored once it lets go", async (t) => {
  await t.step(
    "the shared layer: the write waits for the lock, another handle reads the page",
    async () => {
      await using store = await tempStore();
      const path = store.path;
      const writer = await Deno.openKv(path);
      const reader = await Deno.openKv(path);
      try {
        const page = storedPage(ORIGIN + "/");
        const lock = await holdWriteLock(path);
        let written: Promise<boolean>;
        try {
          written = sharedLayer(writer, "build", 16).write(page);
          // Held a moment while the write meets it (it used to give up at its first try).
          await new Promise((resolve) => setTimeout(resolve, 100));
        } finally {
          await lock.release();
        }
        assert.equal(await written, true);
        assert.deepEqual((await sharedLayer(reader, "build", 16).read(page.key)).page, page);
      } finally {
        writer.close();
        reader.close();
      }
    },
  );

  await t.step(
    "an app: a miss answered while the lock is held; close() waits for its write",
    async () => {
      await using store = await tempStore();
      const path = store.path;
      const kv = await Deno.openKv(path);
      const app = memoryApp({
        routes: { "index.tsx": { cache: { maxAge: 60 }, default: () => "cached while locked" } },
      }, { kv, origins: [ORIGIN], allowedHosts: ["app.example"] });
      try {
        const lock = await holdWriteLock(path);
        try {
          const res = await app.request(ORIGIN + "/");
          assert.equal(res.headers.get("x-cache"), "MISS");
          assert.match(await res.text(), /cached while locked/);
        } finally {
          await lock.release();
        }
      } finally {
        await app.close();
        kv.close();
      }
      const other = await Deno.openKv(path);
      try {
        const stored = [];
        for await (const { key } of other.list({ prefix: ["page_cache"] })) {
          if (key[2] === "page") stored.push(key);
        }
        assert.equal(stored.length, 1, "the page is in KV for every other process");
      } finally {
        other.close();
      }
    },
  );
});
