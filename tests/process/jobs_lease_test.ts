/**
 * @module
 * A job's try cut off by its process's death (SIGKILL) is taken over once its lease lapsed: the
 * delivery again of a try waits on the lease its run renews (`tests/jobs_test.ts`: one alive is
 * left to it), and a dead process renews nothing.
 */
import assert from "node:assert/strict";
import { defineJobs, type JobTry, listenJobs } from "../../lib/kv/jobs.ts";
import { tempStorePath } from "../helpers/kv.ts";
import { within } from "../helpers/wait.ts";

const JOBS = new URL("../../lib/kv/jobs.ts", import.meta.url).href;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

Deno.test("a try whose process died mid-run is taken over once its lease lapsed", async () => {
  const path = await tempStorePath();
  // The first process enqueues the job and dies in its run, its lease taken and never given back.
  const code = `import { defineJobs, listenJobs } from "${JOBS}";
    const kv = await Deno.openKv(Deno.env.get("KV"));
    const jobs = defineJobs({ long: { run: () => {
      console.log("running");
      return new Promise(() => {});
    } } });
    listenJobs(kv, jobs);
    await jobs.enqueue(kv, "long", { n: 1 }, { key: "k-1" });`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", CONFIG, "--ext=ts", code],
    env: { KV: path, NODE_ENV: "production" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const running = async () => {
    while (!text.includes("running")) {
      const read = await lines.read();
      if (read.done) throw new Error(`the first process ended before its run: ${text}`);
      text += read.value;
    }
  };
  await within(running(), 30_000, "the first process's run");
  child.kill("SIGKILL");
  await child.status;
  await lines.cancel();

  const kv = await Deno.openKv(path);
  const closing = new AbortController();
  const ran: unknown[] = [];
  const jobs = defineJobs({ long: { run: (payload: { n: number }) => void ran.push(payload) } });
  const app = listenJobs(kv, jobs, { closing: closing.signal });
  try {
    assert.equal((await Array.fromAsync(kv.list({ prefix: ["_jobs", "try"] }))).length, 1);
    const tried = new Promise<JobTry>((resolve) => app.watch(resolve));
    // The message again, as KV sends a dead process's (about a minute on): it waits for the lease
    // to lapse (15 s after its last renewal), then runs.
    await kv.enqueue({ job: "long", id: "k-1", payload: { n: 1 }, attempt: 0, keyed: true });
    const again = await within(tried, 60_000, "the killed try's run in the next process");
    assert.equal(again.id, "k-1");
    assert.equal(again.digest, undefined);
    assert.deepEqual(ran, [{ n: 1 }]);
  } finally {
    closing.abort();
    await app.ended();
    kv.close();
  }
});
