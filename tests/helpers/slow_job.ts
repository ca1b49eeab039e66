/**
 * @module
 * A job `slow` whose run goes on until the test releases it: enqueued under the key `k-1` on an app
 * in memory, and begun.
 */
import { defineJobs } from "../../lib/data.ts";
import { memoryApp } from "./app.ts";
import { within } from "./wait.ts";

export async function begunSlowJob(kv: Deno.Kv) {
  const begun = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const jobs = defineJobs({
    slow: {
      async run() {
        begun.resolve();
        await release.promise;
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  await jobs.enqueue(kv, "slow", undefined, { key: "k-1" });
  await within(begun.promise, 5_000, "the run");
  return { app, jobs, release: release.resolve };
}
