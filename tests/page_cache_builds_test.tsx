/**
 * @module
 * The page cache across builds on one KV store - a rollout with two versions side by side, a
 * rollback - in-process: a page stored by one build is never served by another (its script URLs
 * may be gone), and each finds its own again.
 */
import assert from "node:assert/strict";
import { createApp } from "../lib/server.ts";
import { FIXTURE_ROOT } from "./helpers/project_copy.ts";
import { memoryManifest } from "./helpers/app.ts";

const ORIGIN = "https://app.example";

Deno.test("a page stored by one build is served by that build only, on a shared store", async () => {
  using kv = await Deno.openKv(":memory:");
  const renders: string[] = [];
  /** The same route in two builds: each page says which build rendered it. */
  const appOf = (build: string) => {
    const files = {
      routes: {
        "index.tsx": {
          cache: { maxAge: 600, tags: ["home"] },
          default: () => <p>rendered by {build}</p>,
          handler: {
            GET(_req: Request, ctx: { render(): Response }) {
              renders.push(build);
              return ctx.render();
            },
          },
        },
      },
    };
    return createApp({ ...memoryManifest(files), buildId: build }, {
      root: FIXTURE_ROOT,
      kv,
      origins: [ORIGIN],
    });
  };
  const a = appOf("build-a");
  const b = appOf("build-b");
  const load = async (app: typeof a) => {
    const res = await app.request(ORIGIN + "/");
    return {
      state: res.headers.get("x-cache"),
      html: (await res.text()).replaceAll("<!-- -->", ""),
    };
  };
  try {
    assert.equal((await load(a)).state, "MISS");
    // B, beside A or after it, renders its own.
    const fromB = await load(b);
    assert.equal(fromB.state, "MISS");
    assert.match(fromB.html, /rendered by build-b/);
    assert.match(fromB.html, /<meta name="app-build" content="build-b"/);
    // Back to A (a rollback): its own page, from the store, never B's.
    const back = await load(a);
    assert.equal(back.state, "HIT");
    assert.match(back.html, /rendered by build-a/);
    assert.equal((await load(b)).state, "HIT");
    assert.deepEqual(renders, ["build-a", "build-b"]);
  } finally {
    await a.close();
    await b.close();
  }
});
