/**
 * @module
 * The shared page cache across processes: `deno serve --parallel` with two workers on one KV file,
 * a built copy of the test app with a cached page and a handler that revalidates its tag. A page
 * rendered by one worker is answered by the other from KV without rendering again, and a tag
 * revalidated on one worker is seen by both.
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import { tempStorePath } from "../helpers/kv.ts";
import { serveParallel } from "../helpers/parallel.ts";
import { freePort } from "../helpers/server.ts";

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

Deno.test("deno serve --parallel: a cached page renders once for both workers, and revalidateTag reaches both", async (t) => {
  const root = await builtCopy("page-cache", CACHED_FILES);
  const port = freePort();
  await using server = await serveParallel(root, {
    KV_PATH: await tempStorePath(),
    APP_ORIGIN: `http://127.0.0.1:${port}`,
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
  /** Loads until both workers answered `min` times at least each (bounded). */
  const fromBoth = async (min: number) => {
    const seen = new Map<string, Awaited<ReturnType<typeof load>>[]>();
    for (let i = 0; i < 400; i++) {
      const answer = await load();
      seen.set(answer.worker, [...(seen.get(answer.worker) ?? []), answer]);
      if (seen.size === 2 && [...seen.values()].every((list) => list.length >= min)) return seen;
    }
    throw new Error("400 loads, and not both workers answered");
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
    // Within the tag check (50 ms) every worker sees it; loads keep going until both did.
    const seen = new Map<string, boolean>();
    for (let i = 0; i < 400 && seen.size < 2; i++) {
      const { worker, html } = await load();
      if (/version 1/.test(html)) seen.set(worker, true);
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(seen.size, 2, "both workers serve version 1");
    const after = await fromBoth(2);
    for (const answers of after.values()) {
      for (const { html } of answers) assert.match(html, /version 1/);
    }
    assert.ok(await renders() <= 3, "rendered again once per worker at most");
  });
});
