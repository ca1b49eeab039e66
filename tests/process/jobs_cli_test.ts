/**
 * @module
 * `deno task jobs` (`lib/cli/jobs.ts`), ops' hands on dead jobs, on a store file as the server's:
 * it lists them with their digests, runs one again (its entry gone, its message enqueued as a first
 * try) and drops another. Before it, docs/data.md told ops to enqueue a dead job again with a new
 * key and delete its entry, and nothing short of code of their own did either.
 */
import assert from "node:assert/strict";
import { PROJECT_ROOT } from "../../lib/cli/root.ts";
import { tempStorePath } from "../helpers/kv.ts";

async function jobsTask(path: string, ...args: string[]) {
  const { code, stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "lib/cli/jobs.ts", ...args],
    cwd: PROJECT_ROOT,
    env: { KV_PATH: path },
  }).output();
  return { code, out: new TextDecoder().decode(stdout).trim() };
}

Deno.test("deno task jobs lists the dead jobs, retries one and drops another", async () => {
  const path = await tempStorePath();
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
  const path = await tempStorePath();
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
