/**
 * @module
 * The shared page cache across processes, on a built copy of the test app with a cached page and a
 * handler that revalidates its tag. `deno serve --parallel` with two workers on one KV file: a page
 * rendered by one worker is answered by the other from KV without rendering again, and a tag
 * revalidated on one worker reaches the other by the push (tag_push.ts) — with a tag check of a
 * minute, so nothing else could. Two `deno serve` processes on one file, which the push does not
 * cross: the tag check (`PAGE_CACHE_TAG_CHECK_MS`) brings it to the other. No timed assertions:
 * each waits, boundedly, for every worker to serve the new page.
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import { tempStorePath } from "../helpers/kv.ts";
import { serveParallel } from "../helpers/parallel.ts";
import { freePort, startServer, type TestServer } from "../helpers/server.ts";

export const CACHED_FILES = {
  "routes/_middleware.ts": `const worker = crypto.randomUUID();
    export const handler = async (c, next) => {
      await next();
      c.header("X-Worker", worker);
    };`,
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
      async GET(_req, ctx) {
        return Response.json({ renders: String((await kvOf(ctx).get(["renders"])).value?.value ?? 0n) });
      },
    };`,
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
  const port = freePort();
  await using server = await serveParallel(root, {
    KV_PATH: await tempStorePath(),
    APP_ORIGIN: `http://127.0.0.1:${port}`,
    // A minute: a worker that saw the revalidation before that was told by the push.
    PAGE_CACHE_TAG_CHECK_MS: "60000",
  }, port);
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
  const kvPath = await tempStorePath();
  const serve = (port: number) =>
    startServer({ KV_PATH: kvPath, APP_ORIGIN: `http://127.0.0.1:${port}` }, {
      root,
      port,
      args: (port) => ["serve", "-A", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
    });
  await using one = await serve(freePort());
  await using other = await serve(freePort());
  using client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  for (const server of [one, other]) assert.equal((await servedBy(server, client, 0)).size, 1);
  const published = await fetch(one.origin + "/api/publish", { method: "POST", client });
  assert.deepEqual(await published.json(), { version: 1 });
  assert.equal((await servedBy(one, client, 1)).size, 1, "the process that revalidated");
  assert.equal((await servedBy(other, client, 1)).size, 1, "the other, by its tag check");
});
