/**
 * @module
 * A page no one holds yet, asked for by many at once (lib/cache/active.ts, `miss`; waiting.ts):
 * in one process the first request renders and the others are answered from what it stored; two
 * apps on one KV store (as two processes are) render it once between them, by the page's lease. A
 * first render that fails, that may not be stored, or that hangs never takes its waiters with it:
 * they render the page themselves. A lease is renewed while its render lasts, and one its holder
 * stopped renewing (it died) is taken over. The push that wakes waiters in other isolates
 * (lib/cache/stored_push.ts). Across `deno serve --parallel` workers: tests/process/page_cache_test.ts.
 */
import assert from "node:assert/strict";
import { Suspense, use } from "react";
import type { App } from "../lib/server.ts";
import type { AppFiles, TestOptions } from "./helpers/app.ts";
import { memoryApp } from "./helpers/app.ts";
import { LEASELESS_AFTER, MAX_WRITES } from "../lib/cache/active.ts";
import { LEASE_LAPSE_MS, LEASE_RENEW_MS, sharedLayer } from "../lib/cache/shared.ts";
import { onStored } from "../lib/cache/stored_push.ts";
import { serialize } from "node:v8";
import { copyUpTo, type ReadAhead } from "../lib/cache/body_copy.ts";

const ORIGIN = "https://app.example";

function Widget({ n }: { n: number }) {
  return <b>widget {n}</b>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits, boundedly, until `done()`. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await pause(10);
  assert.ok(done(), what);
}

interface Answer {
  status: number;
  state: string | null;
  html: string;
  res: Response;
}

async function loadFrom(app: App, path = "/"): Promise<Answer> {
  const res = await app.request(ORIGIN + path);
  const html = (await res.text()).replaceAll("<!-- -->", "");
  return { status: res.status, state: res.headers.get("x-cache"), html, res };
}

/** Apps of `routes` on one KV store of their own, as `apps` processes on one file would be. */
async function cachedApps(routes: AppFiles["routes"], apps = 1, options: TestOptions = {}) {
  const kv = await Deno.openKv(":memory:");
  const made = Array.from({ length: apps }, () =>
    memoryApp({ routes, islands: { Widget } }, {
      kv,
      origins: [ORIGIN],
      allowedHosts: ["app.example"],
      ...options,
    }));
  return {
    apps: made,
    kv,
    async [Symbol.asyncDispose]() {
      for (const app of made) await app.close();
      kv.close();
    },
  };
}

/**
 * A cached page whose renders are counted; the first waits for `release()`, and then renders as
 * `first` says (a page, a Suspense boundary that fails, a 503).
 */
function heldFirst(first: "page" | "suspense" | "status" = "page") {
  const count = { renders: 0 };
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  const Boom = ({ failing }: { failing: Promise<never> }) => use(failing);
  const module = {
    cache: { maxAge: 60 },
    handler: {
      async GET(
        _req: Request,
        ctx: { render(data: number, init?: ResponseInit): Promise<Response> },
      ) {
        const n = ++count.renders;
        if (n > 1) return ctx.render(n);
        await gate;
        if (first === "status") return ctx.render(n, { status: 503 });
        return ctx.render(first === "suspense" ? -1 : n);
      },
    },
    default: ({ data }: { data: number }) =>
      data === -1
        ? (
          <Suspense fallback={<p>wait</p>}>
            <Boom failing={Promise.reject(new Error("boom"))} />
          </Suspense>
        )
        : (
          <>
            <p>render {data}</p>
            <Widget n={data} />
          </>
        ),
  };
  return { count, module, release };
}

/** Page leases held in `kv` (lib/cache/shared.ts). */
async function leases(kv: Deno.Kv): Promise<number> {
  let n = 0;
  for await (const { key } of kv.list({ prefix: ["page_cache"] })) if (key[2] === "lease") n++;
  return n;
}

/** The CSP nonce a response names, and the nonces its body's scripts carry. */
function noncesOf({ res, html }: Answer) {
  const csp = /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy")!)![1];
  return { csp, body: new Set([...html.matchAll(/nonce="([^"]+)"/g)].map((m) => m[1])) };
}

const failed = ({ status, html }: Answer) => status !== 200 || /server-side exception/.test(html);

Deno.test("concurrent first requests render the page once; the others are answered from what it stored", async () => {
  const { count, module, release } = heldFirst();
  await using t = await cachedApps({ "index.tsx": module });
  const [app] = t.apps;
  const loads = Array.from({ length: 20 }, () => loadFrom(app));
  await until(() => count.renders === 1, "the first render began");
  await pause(50); // the others reach their wait (nothing to assert: they would render)
  release();
  const answers = await Promise.all(loads);
  assert.equal(count.renders, 1, "twenty requests, one render");
  assert.deepEqual(answers.map(({ state }) => state).sort(), [...Array(19).fill("HIT"), "MISS"]);
  const miss = answers.find(({ state }) => state === "MISS")!;
  for (const answer of answers) {
    assert.equal(answer.status, 200);
    assert.equal(answer.html, miss.html, "the page as rendered");
    // Each answer names the stored page's nonce, which its scripts carry (lib/cache/entry.ts).
    const { csp, body } = noncesOf(answer);
    assert.deepEqual(body, new Set([csp]));
  }
  assert.equal((await loadFrom(app)).state, "HIT");
  assert.equal(count.renders, 1);
});

for (
  const [first, what] of [
    ["suspense", "fails inside a Suspense boundary after its shell"],
    ["status", "answers 503 (not storable)"],
  ] as const
) {
  Deno.test(`a first render that ${what} is never served to its waiters: they render it themselves`, async () => {
    const { count, module, release } = heldFirst(first);
    await using t = await cachedApps({ "index.tsx": module });
    const [app] = t.apps;
    const loads = Array.from({ length: 8 }, () => loadFrom(app));
    await until(() => count.renders === 1, "the first render began");
    await pause(50);
    release();
    const answers = await Promise.all(loads);
    assert.equal(answers.filter(failed).length, 1, "only the first request sees its failure");
    for (const answer of answers.filter((answer) => !failed(answer))) {
      assert.equal(answer.state, "MISS");
      assert.match(answer.html, /render [2-8]/);
    }
    assert.equal(count.renders, 8);
    assert.equal((await loadFrom(app)).state, "HIT", "one of theirs was stored");
  });
}

Deno.test("a first render whose requester leaves mid-stream: its waiters render the page themselves", async () => {
  let renders = 0;
  let finish!: () => void;
  const late = new Promise<string>((resolve) => finish = () => resolve("the rest"));
  const Rest = ({ text }: { text: Promise<string> }) => <p>{use(text)}</p>;
  await using t = await cachedApps({
    "index.tsx": {
      cache: { maxAge: 60 },
      default: () => {
        const n = ++renders;
        return (
          <>
            <p>render {n}</p>
            <Suspense fallback={<p>wait</p>}>
              <Rest text={n === 1 ? late : Promise.resolve("the rest")} />
            </Suspense>
          </>
        );
      },
    },
  });
  const [app] = t.apps;
  try {
    const first = await app.request(ORIGIN + "/"); // its shell: the rest is still to come
    assert.equal(first.headers.get("x-cache"), "MISS");
    const waiting = Array.from({ length: 4 }, () => loadFrom(app));
    await pause(50);
    assert.equal(renders, 1, "the others wait for the first");
    assert.equal(await leases(t.kv), 1, "the first holds the page's lease");
    await first.body!.cancel(); // the requester leaves
    // The lease goes with it (else it stays for the render limit, and so would the waiters).
    let left = 1;
    for (let i = 0; i < 500 && left > 0; i++) {
      left = await leases(t.kv);
      if (left > 0) await pause(10);
    }
    assert.equal(left, 0, "the lease let go");
    const answers = await Promise.all(waiting);
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.match(answer.html, /render [2-5].*the rest/s);
    }
    assert.equal(renders, 5);
  } finally {
    finish();
  }
});

Deno.test("a first requester that never reads its page: the waiters are answered from its render, rendered once", async () => {
  let renders = 0;
  // 400 KB: far past what the stream's queues hold ahead of a reader that does not read.
  const rows = Array.from({ length: 4000 }, (_, i) => `row ${i} ${"x".repeat(90)}`);
  await using t = await cachedApps(
    {
      "index.tsx": {
        cache: { maxAge: 60 },
        default: () => {
          renders++;
          return <ul>{rows.map((row) => <li key={row}>{row}</li>)}</ul>;
        },
      },
    },
    1,
    { requestTimeoutMs: 4000 },
  );
  const [app] = t.apps;
  const first = await app.request(ORIGIN + "/"); // its body is never read
  try {
    assert.equal(first.headers.get("x-cache"), "MISS");
    const waiters = await Promise.all(Array.from({ length: 3 }, () => loadFrom(app)));
    // Before, each waited half its deadline (2 s) for a copy its requester held up, then rendered.
    assert.equal(renders, 1, "four requests, one render");
    for (const answer of waiters) {
      assert.equal(answer.state, "HIT");
      assert.equal(answer.html.match(/<li>/g)?.length, rows.length);
    }
  } finally {
    await first.body!.cancel();
  }
});

/** A body of `chunks` chunks of 1000 bytes, made as they are read; `reads` counts them. */
function counted(chunks: number) {
  const source = { reads: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (source.reads === chunks) return controller.close();
      controller.enqueue(new Uint8Array(1000).fill(++source.reads));
    },
  }, { highWaterMark: 0 });
  return { source, body };
}

/** A copy of `counted(chunks)`, and what its `ended` got (null: not yet). */
function copyOf(chunks: number, max: number, ahead: ReadAhead, holdMs = 60_000) {
  const { source, body } = counted(chunks);
  const got: { bytes: Uint8Array | undefined | null } = { bytes: null };
  const copy = copyUpTo(body, max, ahead, holdMs, (bytes) => {
    got.bytes = bytes;
    return Promise.resolve();
  });
  return { source, copy, ended: () => got.bytes };
}

Deno.test("a miss's copy is read ahead of its reader, whole and at once", async () => {
  const ahead = { held: 0, limit: 1 << 20 };
  const { source, ended, copy } = copyOf(10, 100_000, ahead);
  await until(() => ended() !== null, "the copy ended with nobody reading");
  assert.equal(ended()?.byteLength, 10_000);
  assert.equal(source.reads, 10);
  assert.equal(ahead.held, 10_000, "held for its reader");
  assert.equal((await new Response(copy).bytes()).byteLength, 10_000);
  assert.equal(ahead.held, 0, "let go as the reader took it");
});

Deno.test("reading ahead is bounded: by the process's bound and by the page's, past which it goes at its reader's pace", async () => {
  const ahead = { held: 0, limit: 2500 };
  const one = copyOf(10, 100_000, ahead);
  await pause(50);
  assert.ok(one.source.reads <= 4, `${one.source.reads} chunks read past a bound of 2.5`);
  assert.equal(one.ended(), null);
  const other = copyOf(10, 100_000, ahead); // the bound is spent: one chunk ahead, as before
  await pause(50);
  assert.ok(other.source.reads <= 1, `${other.source.reads} chunks read with the bound spent`);
  const [a, b] = await Promise.all(
    [one.copy, other.copy].map((copy) => new Response(copy).bytes()),
  );
  assert.equal(a.byteLength + b.byteLength, 20_000, "every byte reaches its reader");
  assert.equal(one.ended()?.byteLength, 10_000);
  assert.equal(other.ended()?.byteLength, 10_000);
  assert.equal(ahead.held, 0);

  // A page past the largest stored: its waiters are told at once, and it goes at its reader's pace.
  const large = copyOf(10, 3000, { held: 0, limit: 1 << 20 });
  await until(() => large.ended() !== null, "told as soon as it grew past the bound");
  assert.equal(large.ended(), undefined);
  await pause(50);
  assert.ok(large.source.reads <= 5, `${large.source.reads} chunks read of a page never stored`);
  await large.copy.cancel();
});

Deno.test("a reader that never takes what was read ahead is cut off after the hold bound, and the bytes let go", async () => {
  const ahead = { held: 0, limit: 1 << 20 };
  const { ended, copy } = copyOf(10, 100_000, ahead, 100);
  await until(() => ended() !== null, "the page was stored all the same");
  assert.equal(ended()?.byteLength, 10_000);
  await until(() => ahead.held === 0, "the bytes held for it let go");
  await assert.rejects(() => new Response(copy).bytes(), /took nothing of the page for 100 ms/);

  // One that keeps taking, however slowly, is not cut off: longer than the bound in all.
  const slow = copyOf(15, 100_000, ahead, 200);
  const reader = slow.copy.getReader();
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    await pause(20);
  }
  assert.equal(size, 15_000);
  assert.equal(ahead.held, 0);
});

Deno.test("a first render that hangs: its waiters stop waiting within their bound and render it themselves", async () => {
  const { count, module, release } = heldFirst();
  // The waiters wait half of what their deadline leaves them: about a second here.
  await using t = await cachedApps({ "index.tsx": module }, 1, { requestTimeoutMs: 2000 });
  const [app] = t.apps;
  try {
    const first = loadFrom(app);
    await until(() => count.renders === 1, "the first render began");
    const waiters = await Promise.all(Array.from({ length: 5 }, () => loadFrom(app)));
    // Answered while the first render is still held: none of them waited for it to end.
    assert.equal(count.renders, 6);
    for (const answer of waiters) {
      assert.equal(answer.status, 200);
      assert.equal(answer.state, "MISS");
      assert.match(answer.html, /render [2-6]/);
    }
    // The deadline's timer keeps no process alive (lib/server/deadline.ts): this one does.
    const alive = setInterval(() => {}, 100);
    try {
      assert.equal((await first).status, 500, "the first ends at its own deadline");
    } finally {
      clearInterval(alive);
    }
  } finally {
    release();
  }
});

Deno.test("two apps on one KV store (two processes): a first render in one, the other waits for its page in KV", async () => {
  const { count, module, release } = heldFirst();
  await using t = await cachedApps({ "index.tsx": module }, 2);
  const [one, other] = t.apps;
  const first = loadFrom(one);
  await until(() => count.renders === 1, "the first render began, under the page's lease");
  const waiting = Array.from({ length: 6 }, () => loadFrom(other));
  await pause(50);
  release();
  const answers = [await first, ...await Promise.all(waiting)];
  assert.equal(count.renders, 1, "one render between the two");
  assert.deepEqual(answers.map(({ state }) => state), ["MISS", ...Array(6).fill("HIT")]);
  for (const answer of answers) assert.equal(answer.html, answers[0].html);
});

Deno.test("two apps on one KV store: a first render that stores nothing lets go of its lease, and the other renders", async () => {
  const { count, module, release } = heldFirst("status");
  await using t = await cachedApps({ "index.tsx": module }, 2);
  const [one, other] = t.apps;
  const first = loadFrom(one);
  await until(() => count.renders === 1, "the first render began, under the page's lease");
  const waiting = Array.from({ length: 4 }, () => loadFrom(other));
  await pause(50);
  release();
  assert.equal((await first).status, 503);
  const answers = await Promise.all(waiting);
  for (const answer of answers) {
    assert.equal(answer.status, 200);
    assert.match(answer.html, /render 2/, "rendered once in the other app, for all four");
  }
  assert.equal(count.renders, 2);
});

Deno.test("two apps on one KV store: a first render longer than a lease's lapse renews it, and the other's waiter still gets its page", async () => {
  const { count, module, release } = heldFirst();
  const kv = await Deno.openKv(":memory:");
  let writes = 0;
  // The holder's KV writes counted: its lease, the lease's renewals, its page.
  const counted = new Proxy(kv, {
    get(target, name) {
      if (name === "atomic") writes++;
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const options = { origins: [ORIGIN], allowedHosts: ["app.example"] };
  const one = memoryApp({ routes: { "index.tsx": module }, islands: { Widget } }, {
    kv: counted,
    ...options,
  });
  const other = memoryApp({ routes: { "index.tsx": module }, islands: { Widget } }, {
    kv,
    ...options,
  });
  try {
    const first = loadFrom(one);
    await until(() => count.renders === 1, "the first render began, under the page's lease");
    const waiter = loadFrom(other);
    await pause(2 * LEASE_LAPSE_MS);
    const renewed = writes - 1;
    release();
    const answers = [await first, await waiter];
    assert.deepEqual(answers.map(({ state }) => state), ["MISS", "HIT"]);
    assert.equal(answers[1].html, answers[0].html);
    assert.equal(count.renders, 1, "rendered once: the waiter never took the holder for dead");
    assert.ok(renewed >= 2, `renewed ${renewed} times while it rendered`);
    for (let i = 0; i < 100 && await leases(kv) > 0; i++) await pause(20);
    assert.equal(await leases(kv), 0, "let go with the page");
    const after = writes;
    await pause(3 * LEASE_RENEW_MS);
    assert.equal(writes, after, "no renewal once let go");
  } finally {
    await one.close();
    await other.close();
    kv.close();
  }
});

Deno.test("a page's lease its holder stopped renewing (it died): a miss takes it over, renders, and lets it go with the page", async () => {
  const { count, module, release } = heldFirst();
  release();
  await using t = await cachedApps({ "index.tsx": module }, 1);
  const [app] = t.apps;
  // A process that took the page's lease and died: it is never renewed nor let go.
  const dead = sharedLayer(t.kv, "in-memory", 16);
  assert.equal(await dead.lease(ORIGIN + "/", 60_000), "taken");
  dead.lapse(ORIGIN + "/");
  const answer = await loadFrom(app);
  assert.equal(answer.status, 200);
  assert.equal(answer.state, "MISS");
  assert.equal(count.renders, 1);
  // Taken over, so let go with the page: before, it stayed for the dead holder's whole term.
  for (let i = 0; i < 100 && await leases(t.kv) > 0; i++) await pause(20);
  assert.equal(await leases(t.kv), 0);
  assert.equal((await loadFrom(app)).state, "HIT");
});

Deno.test("another isolate's word that it let go of a page's lease wakes the waiters of that page only", async () => {
  const push = import.meta.resolve("../lib/cache/stored_push.ts");
  // Another isolate of this process, as a `deno serve --parallel` worker is.
  const worker = new Worker(
    `data:text/javascript,${
      encodeURIComponent(`import { announceStored } from "${push}";
      self.onmessage = (event) => announceStored(event.data);
      self.postMessage("ready");`)
    }`,
    { type: "module" },
  );
  const woken: string[] = [];
  const stops = ["https://app.example/a", "https://app.example/b"].map((key) =>
    onStored(key, () => woken.push(key))
  );
  try {
    await new Promise((resolve) => worker.addEventListener("message", resolve, { once: true }));
    worker.postMessage("https://app.example/b");
    await until(() => woken.length > 0, "the word crossed isolates");
    await pause(50); // nothing else comes
    assert.deepEqual(woken, ["https://app.example/b"]);
    stops[1]();
    worker.postMessage("https://app.example/b");
    worker.postMessage("https://app.example/a");
    await until(() => woken.length > 1, "the word for /a");
    await pause(50);
    assert.deepEqual(woken, ["https://app.example/b", "https://app.example/a"], "/b stopped");
  } finally {
    stops.forEach((stop) => stop());
    worker.terminate();
  }
});

Deno.test("a flood of unknown URLs on a cached route stops costing KV commits for leases; a stored page brings them back", async () => {
  const kv = await Deno.openKv(":memory:");
  let writes = 0;
  // Every KV write of the app counted: atomic commits and deletes.
  const counted = new Proxy(kv, {
    get(target, name) {
      if (name === "atomic" || name === "delete") writes++;
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  /** Once the writes after the responses are done. */
  const settled = async () => {
    for (let last = -1, i = 0; last !== writes && i < 100; i++) {
      last = writes;
      await pause(50);
    }
    return writes;
  };
  const app = memoryApp({
    routes: {
      "posts/[id].tsx": {
        cache: { maxAge: 60 },
        handler: {
          GET(
            _req: Request,
            ctx: { params: { id: string }; render(data: string): Promise<Response> },
          ) {
            if (!ctx.params.id.startsWith("known")) {
              return new Response("no such post", { status: 404 });
            }
            return ctx.render(ctx.params.id);
          },
        },
        default: ({ data }: { data: string }) => <p>post {data}</p>,
      },
    },
  }, { kv: counted, origins: [ORIGIN], allowedHosts: ["app.example"] });
  try {
    for (let i = 0; i < 40; i++) {
      assert.equal((await loadFrom(app, `/posts/unknown-${i}`)).status, 404);
    }
    const flood = await settled();
    assert.ok(flood <= 2 * LEASELESS_AFTER, `${flood} KV writes for 40 unknown URLs`);
    // Stored without a lease; the next miss takes one again: its commit, then the page's.
    assert.equal((await loadFrom(app, "/posts/known-1")).status, 200);
    const stored = await settled();
    assert.equal(stored - flood, 1, "the page's write alone");
    assert.equal((await loadFrom(app, "/posts/known-2")).status, 200);
    assert.equal(await settled() - stored, 2, "a lease again");
  } finally {
    await app.close();
    kv.close();
  }
});

Deno.test("with KV's writes hung, pages waiting to be written are bounded: the rest stay in memory only", async () => {
  const kv = await Deno.openKv(":memory:");
  let hung = 0;
  let resume!: () => void;
  const gate = new Promise<void>((resolve) => resume = resolve);
  // Every commit that writes a page's pieces waits for `resume()`; leases and the rest go through.
  const hanging = new Proxy(kv, {
    get(target, name) {
      if (name === "atomic") {
        return () => {
          const op = target.atomic();
          let writesPage = false;
          const wrapped: Deno.AtomicOperation = new Proxy(op, {
            get(o, n) {
              const value = Reflect.get(o, n, o);
              if (typeof value !== "function") return value;
              if (n === "commit") {
                return async () => {
                  if (writesPage) {
                    hung++;
                    await gate;
                  }
                  return await o.commit();
                };
              }
              return (...args: unknown[]) => {
                if (n === "set" && String(args[0]).includes("piece")) writesPage = true;
                value.apply(o, args);
                return wrapped;
              };
            },
          });
          return wrapped;
        };
      }
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const app = memoryApp({
    routes: {
      "posts/[id].tsx": {
        cache: { maxAge: 60 },
        default: ({ params }: { params: { id: string } }) => <p>post {params.id}</p>,
      },
    },
  }, { kv: hanging, origins: [ORIGIN], allowedHosts: ["app.example"] });
  try {
    for (let i = 0; i < MAX_WRITES + 40; i++) {
      const { status, state } = await loadFrom(app, `/posts/${i}`);
      assert.deepEqual([status, state], [200, "MISS"]);
    }
    await until(() => hung >= MAX_WRITES, `${MAX_WRITES} writes waiting on KV`);
    await pause(100);
    assert.equal(hung, MAX_WRITES, "no more than the bound waits on KV");
    // What was not written is still served from this process's memory.
    assert.equal((await loadFrom(app, `/posts/${MAX_WRITES + 39}`)).state, "HIT");
  } finally {
    resume();
    await app.close();
    kv.close();
  }
});

/** Bytes the page cache's entries take in `kv`, as KV serializes them (V8's format). */
async function storedBytes(kv: Deno.Kv): Promise<number> {
  let bytes = 0;
  for await (const { value } of kv.list({ prefix: ["page_cache"] })) {
    bytes += serialize(value).byteLength;
  }
  return bytes;
}

/** Text `length` characters long that compresses little: a page no coding shrinks much. */
function incompressible(length: number): string {
  const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let state = 0x9e3779b9; // xorshift32: the same text each run
  let text = "";
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    text += letters[(state >>> 0) % letters.length];
  }
  return text;
}

Deno.test("a stored page takes its own bytes in KV, not its compressed copies: one of 300 KB is shared too", async (t) => {
  for (const [what, size] of [["a small page", 2_000], ["a 300 KB page", 300_000]] as const) {
    await t.step(what, async () => {
      const text = incompressible(size);
      const count = { renders: 0 };
      const module = {
        cache: { maxAge: 60 },
        default: () => <pre data-render={++count.renders}>{text}</pre>,
      };
      await using apps = await cachedApps({ "index.tsx": module }, 2);
      const [one, other] = apps.apps;
      const first = await loadFrom(one);
      assert.equal(first.state, "MISS");
      // The write goes on after the response: wait for the page (or its failure) in KV.
      await until(() => count.renders === 1, "rendered");
      let bytes = 0;
      for (let i = 0; i < 200 && (bytes = await storedBytes(apps.kv)) < size; i++) await pause(10);
      const body = new TextEncoder().encode(first.html).byteLength;
      // The body, its record and its key: no copy of it in each coding (they are made when held).
      assert.ok(
        bytes >= size && bytes < body + 4096,
        `${bytes} bytes in KV for a ${body}-byte page`,
      );
      const second = await loadFrom(other);
      assert.equal(second.state, "HIT", "the other process finds the page in KV");
      assert.equal(second.html, first.html);
      assert.equal(count.renders, 1);
    });
  }
});

/**
 * `kv` with its round trips counted: commits (atomic or not) and reads (`get`, `getMany`). A
 * lease's renewal (a commit that rewrites a lease it checks) is not counted: a render slowed past
 * half a second by a loaded machine renews its lease, and that is no part of what a miss costs.
 */
function countingKv(kv: Deno.Kv) {
  const counts = { commits: 0, reads: 0 };
  const counted = new Proxy(kv, {
    get(target, name) {
      if (name === "atomic") {
        return () => {
          const op = target.atomic();
          let renewal = false;
          const wrapped: Deno.AtomicOperation = new Proxy(op, {
            get(o, n) {
              const value = Reflect.get(o, n, o);
              if (typeof value !== "function") return value;
              if (n === "commit") return () => (renewal || counts.commits++, o.commit());
              return (...args: unknown[]) => {
                const [first] = args as [Deno.AtomicCheck];
                if (n === "check" && first.key.includes("lease") && first.versionstamp) {
                  renewal = true;
                }
                if (n !== "check" && n !== "set") renewal = false;
                value.apply(o, args);
                return wrapped;
              };
            },
          });
          return wrapped;
        };
      }
      if (name === "set" || name === "delete") counts.commits++;
      if (name === "get" || name === "getMany") counts.reads++;
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  /** The counts once the writes after the responses are done (no lease left, none for 100 ms). */
  const settled = async () => {
    for (let last = "", i = 0; i < 100; i++) {
      const now = JSON.stringify(counts);
      if (now === last && await leases(kv) === 0) break;
      last = now;
      await pause(50);
    }
    const { commits, reads } = counts;
    counts.commits = counts.reads = 0;
    return { commits, reads };
  };
  return { kv: counted, settled };
}

Deno.test("KV round trips: a miss takes its lease and writes its page with the lease's release (two commits) after one read; a stale page's revalidation the same", async () => {
  const kv = await Deno.openKv(":memory:");
  const counting = countingKv(kv);
  let renders = 0;
  const app = memoryApp({
    routes: {
      "index.tsx": {
        cache: { maxAge: 1, staleWhileRevalidate: 60 },
        handler: {
          GET: (_req: Request, ctx: { render(data: number): Promise<Response> }) =>
            ctx.render(++renders),
        },
        default: ({ data }: { data: number }) => <p>render {data}</p>,
      },
    },
  }, { kv: counting.kv, origins: [ORIGIN], allowedHosts: ["app.example"] });
  try {
    const miss = await loadFrom(app);
    assert.deepEqual([miss.state, /render 1</.test(miss.html)], ["MISS", true]);
    // Before: a read more after taking the lease (stored meanwhile?), and one before the write.
    assert.deepEqual(await counting.settled(), { commits: 2, reads: 1 }, "the miss");
    assert.equal((await loadFrom(app)).state, "HIT");
    assert.deepEqual(await counting.settled(), { commits: 0, reads: 0 }, "a hit in memory");
    await pause(1100); // past maxAge
    assert.equal((await loadFrom(app)).state, "STALE");
    let after = await loadFrom(app);
    for (let i = 0; i < 100 && after.state !== "HIT"; i++) {
      await pause(10);
      after = await loadFrom(app);
    }
    assert.match(after.html, /render 2</);
    // Before: the stale page's record and body read again, the lease, a read before the write, the
    // write, and the lease let go in a commit of its own (three commits, three reads).
    assert.deepEqual(await counting.settled(), { commits: 2, reads: 1 }, "the revalidation");
    assert.equal(renders, 2);
  } finally {
    await app.close();
    kv.close();
  }
});

Deno.test("a stale page whose revalidation's lease went unrenewed (its holder died): the stale hits take it over and render it once between two apps", async () => {
  let renders = 0;
  const module = {
    cache: { maxAge: 1, staleWhileRevalidate: 60 },
    handler: {
      GET: (_req: Request, ctx: { render(data: number): Promise<Response> }) =>
        ctx.render(++renders),
    },
    default: ({ data }: { data: number }) => <p>render {data}</p>,
  };
  await using t = await cachedApps({ "index.tsx": module }, 3);
  const [first, ...others] = t.apps;
  assert.equal((await loadFrom(first)).state, "MISS");
  await pause(1100); // past maxAge
  // A process that took the page's lease to revalidate it and died: never renewed nor let go.
  const dead = sharedLayer(t.kv, "in-memory", 16);
  assert.equal(await dead.lease(ORIGIN + "/", 60_000), "taken");
  dead.lapse(ORIGIN + "/");
  const began = performance.now();
  // Both other apps serve it stale, and look at its lease at most every 250 ms, until it is new.
  let answers = await Promise.all(others.map((app) => loadFrom(app)));
  for (let i = 0; i < 100 && answers.some(({ html }) => !/render 2</.test(html)); i++) {
    for (const { state, html } of answers) {
      assert.ok(state === "STALE" && /render 1</.test(html) || /render 2</.test(html), state!);
    }
    await pause(50);
    answers = await Promise.all(others.map((app) => loadFrom(app)));
  }
  const took = performance.now() - began;
  assert.deepEqual(answers.map(({ html }) => /render 2</.test(html)), [true, true]);
  assert.equal(renders, 2, "rendered once between the two");
  assert.ok(took >= LEASE_LAPSE_MS, `not before the lease lapsed: ${Math.round(took)} ms`);
  for (let i = 0; i < 100 && await leases(t.kv) > 0; i++) await pause(20);
  assert.equal(await leases(t.kv), 0, "let go with the page");
});

Deno.test("a holder taken for dead and taken over: its page's write and its release leave the new holder's lease", async () => {
  const kv = await Deno.openKv(":memory:");
  const key = ORIGIN + "/slow";
  // Two processes' layers on one store.
  const holder = sharedLayer(kv, "in-memory", 16);
  const taker = sharedLayer(kv, "in-memory", 16);
  const page = {
    key,
    body: new TextEncoder().encode("<p>slow</p>"),
    nonce: "",
    etag: 'W/"1"',
    headers: [] as [string, string][],
    storedAt: Date.now(),
    maxAge: 60,
    staleWhileRevalidate: 0,
    tags: {},
  };
  try {
    assert.equal(await holder.lease(key, 60_000), "taken");
    // Seen unrenewed elsewhere (its file was busy, its loop blocked) and taken over.
    const { lease: stamp } = await taker.peek(key, () => false);
    assert.equal(await taker.lease(key, 60_000, { over: stamp }), "taken");
    const { lease: taken } = await taker.peek(key, () => false);
    assert.notEqual(taken, stamp);
    // Its page is a page like any: stored; the lease is the taker's, so it stays (before: deleted).
    assert.equal(await holder.write(page, true), true);
    const after = await taker.peek(key, () => true);
    assert.equal(new TextDecoder().decode(after.page?.body), "<p>slow</p>");
    assert.equal(after.lease, taken, "the taker's lease stays");
    await holder.release(key);
    assert.equal((await taker.peek(key, () => false)).lease, taken, "not the holder's to let go");
    // The taker's own write lets go of it, in the commit that stores the page.
    assert.equal(await taker.write({ ...page, storedAt: Date.now() }, true), true);
    assert.equal((await taker.peek(key, () => false)).lease, undefined);
  } finally {
    holder.close();
    taker.close();
    kv.close();
  }
});
