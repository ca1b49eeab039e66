/**
 * @module
 * `deno task jobs` (`lib/cli/jobs.ts`), ops' hands on dead jobs, on a store file as the server's:
 * it lists them with their digests, runs one again (its entry gone, its message enqueued as a first
 * try) and drops another. Before it, docs/data.md told ops to enqueue a dead job again with a new
 * key and delete its entry, and nothing short of code of their own did either.
 */
import assert from "node:assert/strict";
import { PROJECT_ROOT } from "../../lib/cli/root.ts";
import { tempStore } from "../helpers/kv.ts";

function jobsCommand(path: string, args: string[], piped: Deno.CommandOptions = {}) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "lib/cli/jobs.ts", ...args],
    cwd: PROJECT_ROOT,
    env: { KV_PATH: path },
    ...piped,
  });
}

async function jobsTask(path: string, ...args: string[]) {
  const { code, stdout } = await jobsCommand(path, args).output();
  return { code, out: new TextDecoder().decode(stdout).trim() };
}

/** Writes `count` dead jobs of `send` to the store at `path`, ids in KV's order, each with `payload`. */
async function deadJobs(path: string, count: number, payload: unknown = {}): Promise<void> {
  using kv = await Deno.openKv(path);
  for (let i = 0; i < count; i++) {
    const id = `m-${String(i).padStart(3, "0")}`;
    await kv.set(["_jobs", "dead", "send", id], {
      job: "send",
      id,
      payload,
      digest: "WMXRJ-QSSC8",
    });
  }
}

Deno.test("deno task jobs lists the dead jobs, retries one and drops another", async () => {
  await using store = await tempStore();
  const path = store.path;
  const kv = await Deno.openKv(path);
  for (const id of ["m-1", "m-2"]) {
    const dead = { job: "send", id, payload: { id }, digest: "WMXRJ-QSSC8", failedAt: 1 };
    await kv.set(["_jobs", "dead", "send", id], dead);
  }
  kv.close();

  const listed = await jobsTask(path, "dead");
  assert.equal(listed.code, 0);
  assert.deepEqual(listed.out.split("\n").map((line) => JSON.parse(line).id), ["m-1", "m-2"]);
  assert.equal(JSON.parse(listed.out.split("\n")[0]).digest, "WMXRJ-QSSC8");

  assert.deepEqual(await jobsTask(path, "retry", "send", "m-1"), {
    code: 0,
    out: "Enqueued again: send m-1",
  });
  assert.deepEqual(await jobsTask(path, "drop", "send", "m-2"), {
    code: 0,
    out: "Dropped: send m-2",
  });
  assert.equal((await jobsTask(path, "drop", "send", "m-2")).code, 1, "dropped already");
  assert.deepEqual(await jobsTask(path, "dead"), { code: 0, out: "" });

  // The retried one waits in the queue for the app's listener, as its first try.
  await using reopened = await Deno.openKv(path);
  const { promise, resolve } = Promise.withResolvers<unknown>();
  reopened.listenQueue(resolve);
  assert.deepEqual(await promise, { job: "send", id: "m-1", payload: { id: "m-1" }, attempt: 0 });
});

Deno.test("deno task jobs dead lists every dead job, also those whose payload JSON has no form for", async () => {
  await using store = await tempStore();
  const path = store.path;
  const kv = await Deno.openKv(path);
  const cyclic: Record<string, unknown> = { name: "loop" };
  cyclic.self = cyclic;
  const payloads = [12n, new Map([["k", new Set([1])]]), cyclic, { fine: true }];
  for (const [i, payload] of payloads.entries()) {
    const id = `m-${i}`;
    await kv.set(["_jobs", "dead", "send", id], {
      job: "send",
      id,
      payload,
      digest: "WMXRJ-QSSC8",
    });
  }
  kv.close();
  // KV keeps each as it was. Before, JSON.stringify threw on the BigInt: exit 1, a stack trace,
  // and none of the jobs after it listed.
  const listed = await jobsTask(path, "dead");
  assert.equal(listed.code, 0);
  const lines = listed.out.split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(lines.map((line) => line.payload), [
    "12n",
    [["k", [1]]],
    '<ref *1> { name: "loop", self: [Circular *1] }',
    { fine: true },
  ]);
});

Deno.test("deno task jobs dead prints 50 unless --limit says, and how many more on stderr", async () => {
  await using store = await tempStore();
  const path = store.path;
  await deadJobs(path, 53);
  const dead = async (...args: string[]) => {
    const { code, stdout, stderr } = await jobsCommand(path, ["dead", ...args]).output();
    const lines = new TextDecoder().decode(stdout).split("\n").filter(Boolean);
    return {
      code,
      ids: lines.map((line) => JSON.parse(line).id),
      err: new TextDecoder().decode(stderr),
    };
  };
  // Before: every dead job, however many (a week of them, each up to 64 KiB).
  const first = await dead();
  assert.equal(first.code, 0);
  assert.equal(first.ids.length, 50);
  assert.equal(first.ids.at(-1), "m-049");
  assert.equal(first.err, "3 more dead jobs not shown: deno task jobs dead --limit 53\n");
  const two = await dead("send", "--limit", "2");
  assert.deepEqual(two.ids, ["m-000", "m-001"]);
  assert.equal(two.err, "51 more dead jobs not shown: deno task jobs dead send --limit 53\n");
  const all = await dead("--limit=53");
  assert.deepEqual([all.ids.length, all.err], [53, ""]);
  for (const bad of ["0", "-1", "2.5", "many"]) {
    const refused = await dead("--limit", bad);
    assert.equal(refused.code, 2, bad);
    assert.match(refused.err, /^usage: deno task jobs \[dead \[NAME\] \[--limit N\]/);
  }
});

Deno.test("deno task jobs dead read by `| head -1`: stops at the closed pipe, quietly, exit 0", async () => {
  // More than a pipe's buffer (64 KiB), and more than the limit: still writing as the reader goes.
  await using store = await tempStore();
  const path = store.path;
  await deadJobs(path, 60, "x".repeat(20_000));
  const child = jobsCommand(path, ["dead"], { stdout: "piped", stderr: "piped" }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const read = await reader.read();
    if (read.done) break;
    text += read.value;
  }
  await reader.cancel(); // as `head -1` exits
  const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
  assert.equal(JSON.parse(text.split("\n")[0]).id, "m-000");
  // Nothing more read nor counted once the pipe closed: no "10 more" line, and no stack.
  assert.equal(stderr, "");
  assert.equal(status.code, 0);
});
