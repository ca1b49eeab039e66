/**
 * @module
 * A page's lease across two real processes on one KV file (lib/cache/shared.ts, waiting.ts): a
 * holder that dies mid-render (SIGKILL, as an isolate recycled or an OOM does) holds the other
 * process's requests for that page only as long as its lease goes unrenewed, not half their
 * deadline; a live holder that renders for longer than that keeps its lease (it renews it), and
 * its waiter in the other process is still answered from its page, rendered once. A holder killed
 * while it revalidates a stale page in the background (which no request waits on) has its lease
 * taken over by the other process's stale hits once it goes unrenewed: the page is rendered again
 * there, once, and not only when KV drops the dead lease; and the process alive then stops when
 * asked, not a render limit later. The render is held by the test through a key in KV.
 */
import assert from "node:assert/strict";
import { LEASE_LAPSE_MS } from "../../lib/cache/shared.ts";
import { WORKER_NAMING_MIDDLEWARE } from "../helpers/parallel.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { tempStore } from "../helpers/kv.ts";
import { freePort, PortTaken, startServer, type TestServer } from "../helpers/server.ts";

const FILES = {
  "routes/_middleware.ts": WORKER_NAMING_MIDDLEWARE,
  // Held while ["hold", n] is true in KV (30 s at most), its renders counted per \`n\`.
  "routes/held.tsx": `import { kvOf } from "shell/data";
    export const cache = { maxAge: 600 };
    export const handler = {
      async GET(req, ctx) {
        const n = new URL(req.url).searchParams.get("n") ?? "";
        const kv = kvOf(ctx);
        await kv.atomic().sum(["renders", n], 1n).commit();
        for (let i = 0; i < 1500 && (await kv.get(["hold", n])).value === true; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return ctx.render(n);
      },
    };
    export default function Held({ data }) {
      return <p id="held">held {data}</p>;
    }`,
  // Stale a second after its render, for ten minutes; held as /held is; says which render it is.
  "routes/stale.tsx": `import { kvOf } from "shell/data";
    export const cache = { maxAge: 1, staleWhileRevalidate: 600 };
    export const handler = {
      async GET(req, ctx) {
        const n = new URL(req.url).searchParams.get("n") ?? "";
        const kv = kvOf(ctx);
        await kv.atomic().sum(["renders", n], 1n).commit();
        const render = (await kv.get(["renders", n])).value;
        for (let i = 0; i < 1500 && (await kv.get(["hold", n])).value === true; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return ctx.render(String(render));
      },
    };
    export default function Stale({ data }) {
      return <p id="stale">render {data}</p>;
    }`,
};

/**
 * The servers' deadline (`REQUEST_TIMEOUT_MS`): a waiter used to wait half of it for a dead holder.
 * Long, so that the bound asserted below (half of that wait) leaves seconds to a loaded machine.
 */
const DEADLINE_MS = 30_000;
const OLD_WAIT_MS = DEADLINE_MS / 2;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two `deno serve` processes of the built copy on one KV file, as two instances of one app. */
async function twoProcesses() {
  const root = await builtCopy("page-cache-lease", FILES);
  const store = await tempStore();
  const kvPath = store.path;
  // One public origin for both, as two instances of one app have: their pages' keys are the same.
  const serve = (ports: number[], port: number) =>
    startServer({
      KV_PATH: kvPath,
      REQUEST_TIMEOUT_MS: String(DEADLINE_MS),
      APP_ORIGIN: "https://app.example",
      ALLOWED_HOSTS: ["app.example", ...ports.map((port) => `127.0.0.1:${port}`)].join(","),
    }, {
      root,
      port,
      args: (port) => ["serve", "-A", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
    });
  const pair = async (ports: number[]) => {
    const one = await serve(ports, ports[0]);
    const other = await serve(ports, ports[1]).catch(async (error) => {
      await one.stop();
      throw error;
    });
    return { one, other };
  };
  // Each names both ports, so both are picked before either starts: one taken meanwhile (by
  // another run's server, say) makes a new pair, as startServer picks another port alone.
  let started: { one: TestServer; other: TestServer } | undefined;
  for (let tries = 1; !started; tries++) {
    started = await pair([freePort(), freePort()]).catch((error) => {
      if (error instanceof PortTaken && tries < 5) return undefined;
      throw error;
    });
  }
  const { one, other } = started;
  const kv = await Deno.openKv(kvPath);
  const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  return {
    one,
    other,
    kv,
    renders: async (n: string) => Number((await kv.get<bigint>(["renders", n])).value ?? 0n),
    load: async (server: TestServer, path: string) => {
      const res = await fetch(server.origin + path, { client });
      const html = (await res.text()).replaceAll("<!-- -->", "");
      return { status: res.status, state: res.headers.get("x-cache"), html };
    },
    async [Symbol.asyncDispose]() {
      client.close();
      kv.close();
      await one.stop();
      await other.stop();
      await store[Symbol.asyncDispose]();
    },
  };
}

Deno.test("two processes on one KV file: a holder killed while it revalidates a stale page has its lease taken over by the other's stale hits, which render it once", async () => {
  await using t = await twoProcesses();
  const { one, other, kv, renders, load } = t;
  const first = await load(one, "/stale?n=a");
  assert.deepEqual([first.status, first.state], [200, "MISS"]);
  assert.match(first.html, /render 1</);
  await pause(1200); // past maxAge (1 s)
  await kv.set(["hold", "a"], true);
  const stale = await load(one, "/stale?n=a");
  assert.deepEqual([stale.state, /render 1</.test(stale.html)], ["STALE", true]);
  // Its render in the background began, under the page's lease; then the process dies.
  for (let i = 0; i < 500 && await renders("a") < 2; i++) await pause(20);
  assert.equal(await renders("a"), 2, "one's revalidation began");
  one.kill();
  await kv.set(["hold", "a"], false);
  const killed = performance.now();
  // The other serves the stale page meanwhile, never waiting on a render, until its page is new.
  let answer = await load(other, "/stale?n=a");
  for (let i = 0; i < 300 && !/render 3</.test(answer.html); i++) {
    assert.equal(answer.status, 200);
    assert.equal(answer.state, "STALE", "the stale page, not a render in front of the user");
    assert.match(answer.html, /render 1</);
    await pause(100);
    answer = await load(other, "/stale?n=a");
  }
  const took = performance.now() - killed;
  assert.match(answer.html, /render 3</, "revalidated by the process alive");
  assert.equal(answer.state, "HIT");
  assert.equal(await renders("a"), 3, "rendered once more, by the other process only");
  // The bound is LEASE_LAPSE_MS, a look (250 ms apart at most) and a render; generous for a loaded
  // machine. Before, the dead lease's key outlived this loop (30 s) in KV, and so did the stale page.
  assert.ok(took < OLD_WAIT_MS / 2, `revalidated ${Math.round(took)} ms after the kill`);
  // A process that revalidated stops when asked: the render's limit (twice the deadline, 60 s)
  // held its exit before, and the half of it asserted leaves a loaded machine seconds.
  const stopping = performance.now();
  await other.stop();
  const stopped = performance.now() - stopping;
  assert.ok(stopped < DEADLINE_MS, `stopped ${Math.round(stopped)} ms after SIGTERM`);
});

Deno.test("two processes on one KV file: a page's lease outlives a dead holder only briefly, and a live one's waiters still wait", async (t) => {
  await using processes = await twoProcesses();
  const { one, other, kv, renders } = processes;
  /** Waits (10 s at most) until the render of `n` began in `one`, under the page's lease. */
  const began = async (n: string) => {
    for (let i = 0; i < 500 && await renders(n) === 0; i++) await pause(20);
    assert.equal(await renders(n), 1, "the first render began");
  };
  const load = (server: TestServer, n: string) => processes.load(server, `/held?n=${n}`);

  await t.step(
    "a live holder rendering past the lease's lapse: its waiter gets its page",
    async () => {
      await kv.set(["hold", "live"], true);
      const first = load(one, "live");
      await began("live");
      const waiter = load(other, "live");
      // Longer than a lease left unrenewed lasts, and the waiter's looks in between.
      await pause(LEASE_LAPSE_MS * 3);
      await kv.set(["hold", "live"], false);
      const [a, b] = await Promise.all([first, waiter]);
      assert.equal(a.status, 200);
      assert.equal(a.state, "MISS");
      assert.equal(b.status, 200);
      assert.equal(b.state, "HIT", "answered from the holder's page");
      assert.equal(b.html, a.html);
      assert.equal(await renders("live"), 1, "rendered once between the two");
    },
  );

  await t.step(
    "a holder killed mid-render: the other process answers within the lease's lapse, not half its deadline",
    async () => {
      await kv.set(["hold", "dead"], true);
      const first = load(one, "dead").catch((error) => error);
      await began("dead");
      one.kill();
      await first; // the connection is gone with the process
      await kv.set(["hold", "dead"], false);
      const start = performance.now();
      const answer = await load(other, "dead");
      const took = performance.now() - start;
      assert.equal(answer.status, 200);
      assert.match(answer.html, /held dead</);
      assert.equal(await renders("dead"), 2, "rendered again by the process alive");
      // Generous against the old wait (half the deadline): the new bound is LEASE_LAPSE_MS and a look.
      assert.ok(took < OLD_WAIT_MS / 2, `answered after ${Math.round(took)} ms`);
    },
  );
});
