/**
 * @module
 * Background jobs under `deno serve --parallel` (two workers, one KV file): each worker's app
 * listens on KV's queue (`routes/_jobs.ts`); 30 jobs enqueued through both workers each run once,
 * and a key enqueued through both workers at once runs once.
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import { tempStore } from "../helpers/kv.ts";
import { serveParallel, WORKER_NAMING_MIDDLEWARE } from "../helpers/parallel.ts";

const JOBS = `import { defineJobs } from "shell/data";

export default defineJobs({
  count: {
    async run({ n }: { n: number }, { kv }) {
      await kv.atomic().sum(["runs", n], 1n).commit();
      console.log(JSON.stringify({ level: "info", msg: "job ran", n }));
    },
  },
});
`;

const API = `import jobs from "@/routes/_jobs.ts";
import type { Handlers } from "shell";
import { kvOf } from "shell/data";

export const handler: Handlers = {
  async POST(req, ctx) {
    const { n, key } = await req.json();
    const fresh = await jobs.enqueue(kvOf(ctx), "count", { n }, { key });
    return Response.json({ fresh });
  },
  async GET(_req, ctx) {
    const runs: Record<string, number> = {};
    for await (const e of kvOf(ctx).list<Deno.KvU64>({ prefix: ["runs"] })) {
      runs[String(e.key[1])] = Number(e.value.value);
    }
    return Response.json(runs);
  },
};
`;

Deno.test("two workers: every job runs once, and a key enqueued through both at once runs once", async () => {
  const root = await builtCopy("jobs-parallel", {
    "routes/_jobs.ts": JOBS,
    "routes/api/jobs.ts": API,
    "routes/_middleware.ts": WORKER_NAMING_MIDDLEWARE,
  });
  await using store = await tempStore();
  const KV_PATH = store.path;
  await using server = await serveParallel(root, { KV_PATH });
  using fresh = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  const post = async (body: unknown) => {
    const res = await fetch(server.origin + "/api/jobs", {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
      client: fresh,
    });
    if (!res.ok) {
      await res.body?.cancel();
      const failures = server.logs().filter((line) => line.level === "error");
      throw new Error(`${res.status}: ${JSON.stringify(failures)}`);
    }
    return { worker: res.headers.get("x-worker"), ...(await res.json()) };
  };

  const ran = (line: Record<string, unknown>) => line.msg === "job ran";
  const allRan = server.waitForLog(() => server.logs().filter(ran).length >= 31, 30_000);
  const posted = await Promise.all(Array.from({ length: 30 }, (_, n) => post({ n })));
  const same = await Promise.all([post({ n: 99, key: "once" }), post({ n: 99, key: "once" })]);
  await allRan;

  assert.deepEqual(same.map((s) => s.fresh).sort(), [false, true]);
  assert.ok(posted.every((p) => p.fresh));
  const runs = await (await fetch(server.origin + "/api/jobs", { client: fresh })).json();
  const expected = Object.fromEntries([...Array.from({ length: 30 }, (_, n) => [n, 1]), [99, 1]]);
  assert.deepEqual(runs, expected);
});
