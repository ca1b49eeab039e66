/**
 * @module
 * An app on KV under `deno serve --parallel` (2 workers, one KV file): the framework's test app
 * and its wall, every request on a connection of its own so the kernel spreads them over both
 * workers — which a built copy names in an `X-Worker` header, so each test can show it reached
 * both. Nothing the app shows may depend on the worker: a new post is on every load right after
 * it was made, reaches open streams on every worker, a form's state applies once,
 * and the rate limit counts across workers.
 */
import assert from "node:assert/strict";
import { WALL } from "../fixture/routes/_wall/posts.ts";
import { readEvents } from "../helpers/events.ts";
import { tempStore } from "../helpers/kv.ts";
import { serveParallel, workerNamingProject } from "../helpers/parallel.ts";
import { postAsIsland, postWithoutScript, wallAction } from "../helpers/wall.ts";

/** A connection per request: `poolMaxIdlePerHost: 0` keeps none open for the next. */
const fresh = () => Deno.createHttpClient({ poolMaxIdlePerHost: 0 });

/**
 * Sends requests (`send`, a few at a time) until at least `min` were answered and both workers
 * answered some: which worker accepts a new connection is the kernel's choice, and a burst often
 * lands on one. Bounded by time, not by a count: a worker still keeping the build's assets in KV
 * answers nothing until it has (docs/deploying.md), which on a loaded machine outlasts hundreds of
 * answers from the other.
 */
async function fromBothWorkers<T extends { worker: string | null }>(
  send: () => Promise<T>,
  min: number,
  withinMs = 60_000,
): Promise<T[]> {
  const answers: T[] = [];
  const until = Date.now() + withinMs;
  while (answers.length < min || new Set(answers.map((a) => a.worker)).size < 2) {
    if (Date.now() > until) {
      throw new Error(`${answers.length} requests in ${withinMs} ms, all answered by one worker`);
    }
    answers.push(...await Promise.all(Array.from({ length: 5 }, send)));
  }
  return answers;
}

Deno.test("deno serve --parallel: every worker agrees, and live updates cross them", async (t) => {
  const root = await workerNamingProject();
  await using store = await tempStore();
  const KV_PATH = store.path;
  await using server = await serveParallel(root, { KV_PATH, TRUST_PROXY: "1" });
  using http = fresh();
  const client = http;
  const load = async (headers: Record<string, string> = {}) => {
    const res = await fetch(server.origin + "/wall", { client, headers });
    return { worker: res.headers.get("x-worker"), html: await res.text() };
  };
  const action = await wallAction(server.origin);

  await t.step(
    "a new post is on every load right after it was made, from both workers",
    async () => {
      for (const round of [1, 2, 3]) {
        const message = `Posted in round ${round}.`;
        const res = await postWithoutScript(server.origin, { name: "R", message }, { client });
        await res.body?.cancel();
        assert.equal(res.status, 303);
        const loads = await fromBothWorkers(() => load(), 20);
        const showing = loads.filter(({ html }) => html.includes(`<q>${message}</q>`));
        assert.equal(showing.length, loads.length, `round ${round}`);
      }
    },
  );

  await t.step(
    "a post made on one worker reaches open streams on both",
    async () => {
      // From the newest id: a stream without one starts where its worker's KV watch first
      // reports, which can come after a post made right after the stream's headers.
      const store = await Deno.openKv(KV_PATH);
      const since = (await store.get<number>(WALL.latest)).value ?? 0;
      store.close();
      const streams = await fromBothWorkers(async () => {
        const stream = await readEvents(`${server.origin}/wall/events?since=${since}`, {}, client);
        return Object.assign(stream, { worker: stream.response.headers.get("x-worker") });
      }, 2);
      try {
        const res = await postWithoutScript(server.origin, {
          name: "Live",
          message: "Across workers.",
        }, { client });
        await res.body?.cancel();
        for (const stream of streams) {
          // Bounded, untimed: how fast is a bench figure, not a test's.
          const [event] = await stream.waitFor(1, 10_000);
          assert.equal(JSON.parse(event.data).message, "Across workers.");
        }
      } finally {
        await Promise.all(streams.map((s) => s.close()));
      }
    },
  );

  await t.step("a form's state applies once, whichever worker the page loads from", async () => {
    const posted = await postWithoutScript(server.origin, { name: "", message: "hi" }, {
      client,
    });
    assert.equal(posted.status, 303);
    const cookie = posted.headers.getSetCookie()[0].split(";")[0];
    const loads = await fromBothWorkers(() => load({ Cookie: cookie }), 10);
    const shown = loads.filter(({ html }) => html.includes("A name, please."));
    assert.equal(shown.length, 1);
  });

  await t.step("the rate limit counts across workers: 5 of a burst of 10", async () => {
    // A new client for each burst, until one burst reached both workers.
    for (let client = 1;; client++) {
      const calls = await Promise.all(
        Array.from(
          { length: 10 },
          (_, i) =>
            postAsIsland(server.origin, action, { name: "B", message: `burst ${i}` }, {
              client: http,
              headers: { "X-Forwarded-For": `198.51.100.${client}` },
            }),
        ),
      );
      await Promise.all(calls.map((res) => res.body?.cancel()));
      const statuses = calls.map((res) => res.status).sort();
      assert.deepEqual(statuses, [...Array(5).fill(200), ...Array(5).fill(429)]);
      if (new Set(calls.map((res) => res.headers.get("x-worker"))).size === 2) break;
      assert.ok(client < 20, "no burst reached both workers");
    }
  });
});
