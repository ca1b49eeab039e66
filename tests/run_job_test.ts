/**
 * @module
 * The test kit's `runJob` (lib/testing/jobs.ts): a delayed job - a reminder an action enqueued for
 * tomorrow - run now in a test, as its delivery would run it once due: the app's own `run`, with
 * its settings, its signal and timeout, its key's done mark, and a failure counted as any try's (its
 * line, its digest, its retry, its dead letter). Before, nothing in the kit ran a job before it was
 * due: `watchJobs` gave up after 5 s, and docs/testing.md told products to enqueue a second copy
 * without the action's key.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { defineSettings } from "../lib/mod.ts";
import { deadJobs, defineJobs, kvOf } from "../lib/data.ts";
import type { RouteModule } from "../lib/server/manifest.ts";
import { captureLogs, runJob, watchJobs } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
const NEVER = false as boolean;

Deno.test("runJob runs a reminder due tomorrow now, under the action's key, with the app's settings", async () => {
  await using kv = await Deno.openKv(":memory:");
  const settings = defineSettings({ MAIL_URL: v.pipe(v.string(), v.url()) });
  const sent: string[] = [];
  const jobs = defineJobs({
    remind: {
      async run({ booking }: { booking: string }, job) {
        assert.equal(job.signal.aborted, false, "a live signal, as a delivered try's");
        const { MAIL_URL } = settings(job);
        const entry = await job.kv.get<string>(["bookings", booking]);
        if (entry.value === null) return; // cancelled meanwhile: nothing to remind of
        sent.push(`${MAIL_URL} ${entry.value} (${job.id})`);
      },
    },
  });
  const book: RouteModule = {
    handler: {
      async POST(_req, ctx) {
        const kv = kvOf(ctx);
        await kv.set(["bookings", "b-42"], "ada@example.com");
        const queued = await jobs.enqueue(kv, "remind", { booking: "b-42" }, {
          key: "remind:b-42",
          delay: DAY_MS,
        });
        return Response.json({ queued });
      },
    },
  };
  const app = memoryApp({ routes: { "book.ts": book }, jobs, settings }, {
    kv,
    settings: { MAIL_URL: "http://127.0.0.1:9/send" },
  });
  using watch = watchJobs(app, jobs);
  assert.deepEqual(await (await app.request("/book", { method: "POST" })).json(), {
    queued: true,
  });

  const tried = await runJob(app, jobs, "remind", { booking: "b-42" }, { key: "remind:b-42" });
  assert.deepEqual(tried, {
    job: "remind",
    id: "remind:b-42",
    payload: { booking: "b-42" },
    attempt: 0,
  });
  assert.deepEqual(sent, ["http://127.0.0.1:9/send ada@example.com (remind:b-42)"]);
  assert.equal((await watch.next("remind")).id, "remind:b-42", "watchJobs sees the try too");
  // Done under its key, as the queue's message would have marked it: due tomorrow, it runs no more.
  assert.notEqual((await kv.get(["_jobs", "done", "remind", "remind:b-42"])).versionstamp, null);
  await assert.rejects(
    runJob(app, jobs, "remind", { booking: "b-42" }, { key: "remind:b-42" }),
    /The job "remind" already ran under the key "remind:b-42" \(done, or failed and retrying\)/,
  );

  // Cancelled, then due: without a key, a try of its own, which finds nothing to remind of.
  await kv.delete(["bookings", "b-42"]);
  const again = await runJob(app, jobs, "remind", { booking: "b-42" });
  assert.equal(again.digest, undefined);
  assert.match(again.id, /^[0-9a-f-]{36}$/);
  assert.equal(sent.length, 1);
  await app.close();
});

Deno.test("runJob: a failing try is a failure like a delivered one's - its line, its digest, its retry, its dead letter", async () => {
  await using kv = await Deno.openKv(":memory:");
  let tries = 0;
  const jobs = defineJobs({
    remind: {
      run(_: { booking: string }) {
        tries++;
        throw new Error("mail provider said 503");
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv, jobRetries: [0] });
  using watch = watchJobs(app, jobs);
  using logs = captureLogs();
  const first = await runJob(app, jobs, "remind", { booking: "b-7" }, { key: "remind:b-7" });
  assert.match(first.digest ?? "", /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
  assert.equal(first.attempt, 0);
  // Its key ran already, though not to its end: a second runJob under it runs nothing, and says why.
  await assert.rejects(
    runJob(app, jobs, "remind", { booking: "b-7" }, { key: "remind:b-7" }),
    /The job "remind" already ran under the key "remind:b-7" \(done, or failed and retrying\)/,
  );
  const [line] = logs.lines.filter((each) => each.level === "error");
  assert.equal(line.digest, first.digest);
  assert.equal(line.job, "remind");
  assert.equal(line.job_id, "remind:b-7");
  assert.equal(line.retry_in_ms, 0);
  // Its retry goes through KV's queue, as any failed try's: the last, then kept as dead.
  await watch.next("remind"); // the first try, which the watch saw as well
  const last = await watch.next("remind");
  assert.equal(last.attempt, 1);
  assert.equal(tries, 2);
  const [dead] = await deadJobs(kv, "remind");
  assert.deepEqual([dead.id, dead.digest], ["remind:b-7", last.digest]);
  await app.close();
});

Deno.test("runJob: the job's timeout aborts its signal and fails the try", async () => {
  await using kv = await Deno.openKv(":memory:");
  let aborted: unknown;
  const jobs = defineJobs({
    hangs: {
      timeout: 20,
      run(_: undefined, { signal }) {
        // A fetch that never answers, ended only by the signal.
        return new Promise<void>((_, reject) =>
          signal.addEventListener("abort", () => reject(aborted = signal.reason))
        );
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv, jobRetries: [] });
  using logs = captureLogs();
  const tried = await runJob(app, jobs, "hangs", undefined);
  assert.ok(tried.digest);
  assert.equal((aborted as Error).name, "DeadlineExceeded");
  const [line] = logs.lines.filter((each) => each.level === "error");
  assert.equal(line.error.name, "DeadlineExceeded");
  assert.equal(line.dead, true, "no retry: its last try");
  await app.close();
});

Deno.test("runJob: the payload is checked and copied as an enqueue and the queue would; a name or an app it cannot run is refused", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({
    tidy: {
      run(payload: { items: string[] }) {
        payload.items.push("touched by the job");
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  const payload = { items: ["a"] };
  await runJob(app, jobs, "tidy", payload);
  assert.deepEqual(payload, { items: ["a"] }, "the job got a copy, as from KV");
  const url = new URL("https://example.com") as unknown as string; // past the type, as JS would
  await assert.rejects(
    runJob(app, jobs, "tidy", { items: [url] }),
    /Job "tidy": its payload holds a URL \(at payload\.items\[0\]\)/,
  );
  await assert.rejects(
    runJob(app, jobs, "tdy" as "tidy", { items: [] }),
    /No job named "tdy" in routes\/_jobs\.ts; its jobs: tidy/,
  );
  await assert.rejects(runJob({}, jobs, "tidy", { items: [] }), /an app made by createApp/);
  await assert.rejects(
    runJob(memoryApp({ routes: {} }, { kv }), jobs, "tidy", { items: [] }),
    /runs no background jobs/,
  );
  await app.close();
});

Deno.test("runJob and watchJobs take the app's declaration: a job's name and payload are typed by it, and another is refused", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ remind: { run(_: { booking: string }) {} } });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  using watch = watchJobs(app, jobs);
  if (NEVER) {
    // @ts-expect-error -- a payload field renamed in routes/_jobs.ts (booking -> bookingId)
    await runJob(app, jobs, "remind", { bookingId: "b-1" });
    // @ts-expect-error -- a job renamed or mistyped
    await runJob(app, jobs, "remnd", { booking: "b-1" });
    // @ts-expect-error -- a job renamed or mistyped: the watch knows the app's jobs too
    await watch.next("remnd");
    // @ts-expect-error -- the try's payload is the job's
    const _id: number = (await watch.next("remind")).payload.booking;
  }
  const tried = await runJob(app, jobs, "remind", { booking: "b-1" });
  const seen = await watch.next("remind");
  assert.equal(seen.payload.booking, tried.payload.booking);
  assert.equal(seen.payload.booking, "b-1");
  // A declaration that is not the app's (an older copy, another app's) would type another app.
  const other = defineJobs({ remind: { run(_: { booking: string }) {} } });
  await assert.rejects(
    runJob(app, other, "remind", { booking: "b-1" }),
    /runJob: the jobs given are not this app's; give its routes\/_jobs\.ts's default export/,
  );
  assert.throws(() => watchJobs(app, other), /watchJobs: the jobs given are not this app's/);
  await app.close();
});
