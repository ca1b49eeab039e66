/**
 * @module
 * An app with background jobs stops as soon as its work is done. KV's queue listener
 * (`routes/_jobs.ts`) holds the process until its store closes, and under `deno serve` nothing
 * closed it: every stop waited out the whole grace (2 x `REQUEST_TIMEOUT_MS` + 1 s) and said
 * "connections still open" with none open. The store now closes once the jobs under way have ended
 * and no request is in flight - a page's Suspense boundary that reads KV after its shell, an API
 * route that reads it late, an API route's body that reads it as it streams - and never under one
 * of them. `deno task start` (`start.ts`) is held
 * to the same.
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import { tempStore } from "../helpers/kv.ts";
import { serveParallel, WORKER_NAMING_MIDDLEWARE } from "../helpers/parallel.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

/** The default deadline: a grace of 21 s, which the stop held for before. */
const DEADLINE_MS = 10_000;
const GRACE_MS = 2 * DEADLINE_MS + 1000;
/** How long the job takes: well inside `close()`'s 2 s for jobs under way. */
const WORK_MS = 1000;
/** How long the requests wait before they read KV: past the job's end, well inside the grace. */
const LATE_MS = 2 * WORK_MS;

const line = (msg: string) => `console.log(JSON.stringify({ level: "info", msg: "${msg}" }))`;

const FILES = {
  // Which worker answered, under --parallel.
  "routes/_middleware.ts": WORKER_NAMING_MIDDLEWARE,
  "routes/_jobs.ts": `import { defineJobs } from "shell/data";
    export default defineJobs({
      slow: {
        async run(_payload: undefined, { kv }) {
          ${line("job started")};
          await new Promise((resolve) => setTimeout(resolve, ${WORK_MS}));
          await kv.set(["job"], "done");
          ${line("job done")};
        },
      },
    });`,
  "routes/api/enqueue.ts": `import jobs from "@/routes/_jobs.ts";
    import type { Handlers } from "shell";
    import { kvOf } from "shell/data";
    export const handler: Handlers = {
      async POST(_req, ctx) {
        return Response.json(await jobs.enqueue(kvOf(ctx), "slow", undefined));
      },
    };`,
  // Reads KV a while after its answer began: the store must still be open then.
  "routes/api/late.ts": `import type { Handlers } from "shell";
    import { kvOf } from "shell/data";
    export const handler: Handlers = {
      async GET(_req, ctx) {
        const kv = kvOf(ctx);
        await kv.set(["late"], "read late");
        ${line("late entered")};
        await new Promise((resolve) => setTimeout(resolve, ${LATE_MS}));
        return Response.json((await kv.get(["late"])).value);
      },
    };`,
  // Answers at once; its body reads KV a while after the handler returned.
  "routes/api/stream.ts": `import type { Handlers } from "shell";
    import { kvOf } from "shell/data";
    export const handler: Handlers = {
      async GET(_req, ctx) {
        const kv = kvOf(ctx);
        await kv.set(["stream"], "read as it streams");
        let sent = false;
        return new Response(new ReadableStream({
          async pull(controller) {
            if (sent) return controller.close();
            sent = true;
            await new Promise((resolve) => setTimeout(resolve, ${LATE_MS}));
            controller.enqueue(new TextEncoder().encode(String((await kv.get(["stream"])).value)));
          },
        }));
      },
    };`,
  // Its shell goes out at once; its boundary reads KV a while later.
  "routes/later.tsx": `import { Suspense, use } from "react";
    import type { Handlers, PageProps } from "shell";
    import { kvOf } from "shell/data";
    export const handler: Handlers<{ later: Promise<unknown> }> = {
      async GET(_req, ctx) {
        const kv = kvOf(ctx);
        await kv.set(["later"], "read after the shell");
        const later = new Promise((resolve) => setTimeout(resolve, ${LATE_MS}))
          .then(async () => (await kv.get(["later"])).value);
        return ctx.render({ later });
      },
    };
    function Later({ later }) { return <p>{String(use(later))}</p>; }
    export default function Page({ data }: PageProps<{ later: Promise<unknown> }>) {
      return <Suspense fallback={<p>loading</p>}><Later later={data.later} /></Suspense>;
    }`,
};

/** SIGTERM, then the exit code and how long the exit took; killed past the grace, for the assertion. */
async function timedStop(server: TestServer) {
  const started = performance.now();
  const killer = setTimeout(() => server.kill(), GRACE_MS + 5000);
  const code = await server.stop();
  clearTimeout(killer);
  return { code, ms: performance.now() - started };
}

/** `deno serve main.ts`; undefined: `start.ts`, as `deno task start` runs it. */
const SERVE = (port: number) => [
  "serve",
  "-A",
  "--host",
  "127.0.0.1",
  `--port=${port}`,
  "main.ts",
];

/**
 * Starts the app, enqueues the job and, once it runs, asks for the late reads; SIGTERM then. Each
 * read alone is the last work in flight: a store closed at the job's end fails it.
 */
async function stopDuring(
  root: string,
  args: typeof SERVE | undefined,
  reads: { page?: true; api?: true; stream?: true },
) {
  await using store = await tempStore();
  const kvPath = store.path;
  const env = { KV_PATH: kvPath, REQUEST_TIMEOUT_MS: `${DEADLINE_MS}` };
  const server = await startServer(env, { root, args });
  try {
    const enqueued = await server.fetch("/api/enqueue", { method: "POST" });
    assert.equal(await enqueued.json(), true);
    await server.waitForLog((l) => l.msg === "job started", 10_000);
    const page = reads.page && await server.fetch("/later"); // its shell: the boundary waits
    if (page) assert.equal(page.status, 200);
    const stream = reads.stream && await server.fetch("/api/stream"); // its body still to come
    if (stream) assert.equal(stream.status, 200);
    const late = reads.api && server.fetch("/api/late");
    if (late) await server.waitForLog((l) => l.msg === "late entered", 10_000);

    const stopped = timedStop(server);
    if (page) {
      assert.match((await page.text()).replaceAll("<!-- -->", ""), /<p>read after the shell<\/p>/);
    }
    if (stream) assert.equal(await stream.text(), "read as it streams");
    if (late) {
      const answer = await late;
      assert.equal(answer.status, 200);
      assert.equal(await answer.json(), "read late");
    }
    const { code, ms } = await stopped;

    const output = [...server.stdout, ...server.stderr].join("\n");
    assert.equal(code, 0, output);
    assert.doesNotMatch(output, /connections still open/);
    assert.doesNotMatch(output, /"level":"error"/);
    assert.ok(server.logs().some((l) => l.msg === "job done"), output);
    // Seconds of room for a loaded machine; the grace (21 s) is what it took before.
    assert.ok(ms < GRACE_MS / 2, `stopped ${Math.round(ms)} ms after SIGTERM\n${output}`);
    const kv = await Deno.openKv(kvPath);
    try {
      assert.equal((await kv.get(["job"])).value, "done");
    } finally {
      kv.close();
    }
  } finally {
    server.kill();
    await server.stop();
  }
}

Deno.test("an app with a job stops once its requests and jobs are done, not at the grace", async (t) => {
  const root = await builtCopy("serve-jobs-stop", FILES);
  await t.step(
    "deno serve: a job under way and a page's boundary reading KV at SIGTERM",
    () => stopDuring(root, SERVE, { page: true }),
  );
  await t.step(
    "deno serve: a job under way and an API route reading KV at SIGTERM",
    () => stopDuring(root, SERVE, { api: true }),
  );
  await t.step(
    "deno serve: a job under way and an API route's streamed body reading KV at SIGTERM",
    () => stopDuring(root, SERVE, { stream: true }),
  );
  await t.step(
    "deno task start: a job under way and both reads at SIGTERM",
    () => stopDuring(root, undefined, { page: true, api: true }),
  );

  await t.step("deno serve --parallel: two idle workers", async () => {
    await using store = await tempStore();
    await using server = await serveParallel(root, { KV_PATH: store.path });
    // Both workers serving (Deno 2.9.6 can miss a SIGTERM that comes while one starts). Bounded by
    // time, not by a count: on a loaded machine one worker may still be loading after many answers
    // from the other.
    using fresh = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    const workers = new Set<string | null>();
    const until = Date.now() + 60_000;
    while (workers.size < 2 && Date.now() < until) {
      const res = await fetch(server.origin + "/", { client: fresh });
      await res.body?.cancel();
      workers.add(res.headers.get("x-worker"));
    }
    assert.equal(workers.size, 2, "both workers answered");
    const { code, ms } = await timedStop(server);
    const output = [...server.stdout, ...server.stderr].join("\n");
    assert.equal(code, 0, output);
    assert.doesNotMatch(output, /connections still open/);
    assert.ok(ms < GRACE_MS / 2, `stopped ${Math.round(ms)} ms after SIGTERM\n${output}`);
  });
});
