/**
 * @module
 * Background jobs (`lib/kv/jobs/`, `routes/_jobs.ts`): a handler enqueues, the app's listener on
 * its real KV store runs the job outside the request, once per key; a failing job is logged with
 * its digest and the job's name, reported, tried again, and kept as dead once out of tries; the
 * build finds `routes/_jobs.ts`. Before these, the shell had no way to run work outside a request
 * (docs/data.md said nothing of queues or cron, and the manifest had no place for them).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { scan } from "../lib/build/scan.ts";
import * as v from "valibot";
import { defineSettings, secret } from "../lib/mod.ts";
import {
  collection,
  ConflictError,
  deadJobs,
  defineJobs,
  dropDeadJob,
  KeyTooLongError,
  KvLimitError,
  kvOf,
  retryDeadJob,
  SlotKeyError,
} from "../lib/data.ts";
import { enqueueSlot } from "../lib/kv/jobs/cron.ts";
import { triedKey, triedOf } from "../lib/kv/jobs/message.ts";
import { dueSlots, scheduleOf } from "../lib/kv/jobs/schedule.ts";
import { MAX_VALUE_BYTES, valueSize } from "../lib/kv/limits.ts";
import type { JobRun, Telemetry } from "../lib/server.ts";
import type { RouteModule } from "../lib/server/manifest.ts";
import { captureLogs, watchJobs } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";
import { tempStore } from "./helpers/kv.ts";
import { within } from "./helpers/wait.ts";

/** Resolves once `key` holds a value in `kv`: KV's own watch, no polling. */
async function written(kv: Deno.Kv, key: Deno.KvKey): Promise<unknown> {
  for await (const [entry] of kv.watch([key])) {
    if (entry.versionstamp !== null) return entry.value;
  }
}

Deno.test("a job enqueued by a handler runs outside the request, once per key", async () => {
  await using kv = await Deno.openKv(":memory:");
  const ran: string[] = [];
  let finished!: () => void;
  const done = new Promise<void>((resolve) => finished = resolve);
  const jobs = defineJobs({
    reply: {
      run({ ticket }: { ticket: string }) {
        ran.push(ticket);
        finished();
      },
    },
  });
  const inbound: RouteModule = {
    handler: {
      async POST(req, ctx) {
        const key = req.headers.get("x-delivery") ?? undefined;
        const fresh = await jobs.enqueue(kvOf(ctx), "reply", { ticket: "T-1" }, { key });
        return Response.json({ fresh }, { status: 202 });
      },
    },
  };
  const app = memoryApp({ routes: { "inbound.ts": inbound }, jobs }, { kv });
  const post = async () => {
    const res = await app.request("/inbound", { method: "POST", headers: { "x-delivery": "d-1" } });
    return res.json();
  };

  assert.deepEqual(await post(), { fresh: true });
  assert.deepEqual(await post(), { fresh: false }, "a retried delivery enqueues nothing");
  await done;
  assert.deepEqual(ran, ["T-1"]);
  await app.close();
});

Deno.test("a job delivered again after it was done does not run again", async () => {
  await using kv = await Deno.openKv(":memory:");
  let runs = 0;
  const jobs = defineJobs({ count: { run: () => void runs++ } });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  await jobs.enqueue(kv, "count", undefined, { key: "k-1" });
  await written(kv, ["_jobs", "done", "count", "k-1"]);
  // What KV does when a process dies between the work and its mark: the message once more.
  await kv.enqueue({ job: "count", id: "k-1", payload: undefined });
  await jobs.enqueue(kv, "count", undefined, { key: "k-2" });
  await written(kv, ["_jobs", "done", "count", "k-2"]);
  assert.equal(runs, 2);
  await app.close();
});

Deno.test("a failing job is logged, reported, tried again, then kept as dead with its digest", async () => {
  await using kv = await Deno.openKv(":memory:");
  const reported: string[] = [];
  const telemetry: Telemetry = {
    captureFailure(_error, digest) {
      reported.push(digest);
      return { trace_id: null, span_id: null, sentry_event_id: "e".repeat(32) };
    },
    flush: () => Promise.resolve(),
  };
  let tries = 0;
  const jobs = defineJobs({
    send: {
      retries: [1],
      run(_payload: { to: string }) {
        tries++;
        throw new Error("mail provider said 503");
      },
    },
  });
  using logs = captureLogs();
  const app = memoryApp({ routes: {}, jobs }, { kv, telemetry });
  await jobs.enqueue(kv, "send", { to: "ada@example.com" }, { key: "m-1" });

  await written(kv, ["_jobs", "dead", "send", "m-1"]);
  assert.equal(tries, 2, "the first try and the one retry");
  const failures = logs.lines.filter((line) => line.level === "error" && line.job === "send");
  assert.equal(failures.length, 2);
  // Why it died, for an admin's page: the last failure's digest (its line, its Sentry event) and
  // when. Before, a dead job was only its name, id and payload.
  const [dead] = await deadJobs(kv, "send");
  assert.deepEqual(dead, {
    job: "send",
    id: "m-1",
    payload: { to: "ada@example.com" },
    digest: failures[1].digest,
    failedAt: dead.failedAt,
  });
  assert.equal(typeof dead.failedAt, "number");
  assert.equal(failures[0].job_id, "m-1");
  assert.equal(failures[0].error.message, "mail provider said 503");
  assert.equal(failures[0].sentry_event_id, "e".repeat(32));
  assert.deepEqual(reported, [failures[0].digest, failures[1].digest]);
  // Which line is the last, for ops reading the logs: before, the two lines differed only in
  // `attempt`, and nothing said whether another try would come or the job was now dead.
  assert.equal(failures[0].retry_in_ms, 1);
  assert.equal(failures[0].dead, undefined);
  assert.equal(failures[1].dead, true);
  assert.equal(failures[1].retry_in_ms, undefined);
  await app.close();
});

Deno.test("a dead job is run again by retryDeadJob (same id, from its first try), or dropped", async () => {
  await using kv = await Deno.openKv(":memory:");
  let down = true;
  const sent: string[] = [];
  const jobs = defineJobs({
    send: {
      retries: [],
      run({ to }: { to: string }) {
        if (down) throw new Error("mail provider said 503");
        sent.push(to);
      },
    },
  });
  using _logs = captureLogs();
  const app = memoryApp({ routes: {}, jobs }, { kv });
  using watched = watchJobs(app, jobs);
  await jobs.enqueue(kv, "send", { to: "ada@example.com" }, { key: "m-1" });
  await jobs.enqueue(kv, "send", { to: "bob@example.com" }, { key: "m-2" });
  // Both tries ended, dead: a try is told once all of it is written, its lease given back too.
  for (const _ of ["m-1", "m-2"]) assert.ok((await watched.next("send")).digest);

  // The provider is back: one is sent after all, the other forgotten. Before, docs/data.md said to
  // enqueue it again with a new key and delete the entry, and no function or task did either.
  down = false;
  assert.equal(await retryDeadJob(kv, "send", "m-1"), true);
  const retried = await watched.next("send");
  assert.equal(retried.id, "m-1");
  assert.equal(retried.attempt, 0);
  assert.equal(retried.digest, undefined);
  assert.deepEqual(sent, ["ada@example.com"]);
  assert.equal(await dropDeadJob(kv, "send", "m-2"), true);
  assert.deepEqual(await deadJobs(kv), []);
  assert.equal(await retryDeadJob(kv, "send", "m-1"), false, "not dead any more");
  assert.equal(await dropDeadJob(kv, "send", "m-2"), false, "dropped already");
  await app.close();
});

Deno.test("retryDeadJob keeps the job's key and the trace it was enqueued in", async () => {
  await using kv = await Deno.openKv(":memory:");
  const runs: JobRun[] = [];
  const carried = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };
  const telemetry: Telemetry = {
    captureFailure: () => ({ trace_id: null, span_id: null, sentry_event_id: null }),
    flush: () => Promise.resolve(),
    jobContext: () => carried,
    job: (run, work) => (runs.push(run), work()),
  };
  let down = true;
  const jobs = defineJobs({
    send: {
      retries: [],
      run() {
        if (down) throw new Error("mail provider said 503");
      },
    },
  });
  using _logs = captureLogs();
  const app = memoryApp({ routes: {}, jobs }, { kv, telemetry });
  using watched = watchJobs(app, jobs);
  await jobs.enqueue(kv, "send", undefined, { key: "m-1" });
  assert.ok((await watched.next("send")).digest, "dead");
  down = false;
  assert.equal(await retryDeadJob(kv, "send", "m-1"), true);
  assert.equal((await watched.next("send")).digest, undefined);
  // Before: the retry's span had no key and a trace of its own, its tie to the request lost.
  const expected = { name: "send", attempt: 0, key: "m-1", carried };
  assert.deepEqual(runs, [expected, expected]);
  await app.close();
});

Deno.test("attack 22: retryDeadJob runs again a job dead after more tries than one commit takes", async () => {
  await using kv = await Deno.openKv(":memory:");
  let down = true;
  const jobs = defineJobs({
    poll: {
      retries: [],
      run() {
        if (down) throw new Error("upstream said 503");
      },
    },
  });
  using _logs = captureLogs();
  const app = memoryApp({ routes: {}, jobs }, { kv });
  using watched = watchJobs(app, jobs);
  await jobs.enqueue(kv, "poll", undefined, { key: "p-1" });
  assert.ok((await watched.next("poll")).digest, "dead");
  // The marks a job tried every minute for a day leaves (`retries: Array(1440).fill(60_000)`),
  // one a failed try: its first try's is there, the rest as those tries write them. Running 1,440
  // tries here would take a minute.
  for (let attempt = 1; attempt <= 1440; attempt += 10) {
    const atomic = kv.atomic();
    for (let a = attempt; a < attempt + 10 && a <= 1440; a++) {
      atomic.set(triedKey("poll", "p-1", a), true);
    }
    await atomic.commit();
  }
  down = false;
  // Before: KV's bare TypeError "Too many mutations (max 1000)", and the job could not be retried.
  assert.equal(await retryDeadJob(kv, "poll", "p-1"), true);
  const retried = await watched.next("poll");
  assert.deepEqual([retried.attempt, retried.digest], [0, undefined]);
  assert.deepEqual(await deadJobs(kv), []);
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: triedOf("poll", "p-1") })), []);
  await app.close();
});

Deno.test("a job's commit with the product's own writes: both or neither", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ reply: { run() {} } });
  const first = jobs.add(kv.atomic().set(["messages", "m-1"], "hi"), "reply", undefined, {
    key: "mail-1",
  });
  assert.equal((await first.commit()).ok, true);
  const again = jobs.add(kv.atomic().set(["messages", "m-2"], "hi"), "reply", undefined, {
    key: "mail-1",
  });
  assert.equal((await again.commit()).ok, false);
  assert.equal((await kv.get(["messages", "m-2"])).versionstamp, null);
});

Deno.test("the build finds routes/_jobs.ts, and only at the root of routes/", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(root, "routes/desk"), { recursive: true });
    await Deno.writeTextFile(join(root, "routes/_jobs.ts"), "export default {};\n");
    assert.equal((await scan(root)).jobs, "_jobs.ts");
    await Deno.writeTextFile(join(root, "routes/desk/_jobs.ts"), "export default {};\n");
    await assert.rejects(scan(root), /routes\/desk\/_jobs\.ts: _jobs belongs at the root/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a cron job: two apps of one manifest in a process start and close, and a slot runs once", async () => {
  await using first = await Deno.openKv(":memory:");
  await using second = await Deno.openKv(":memory:");
  const jobs = defineJobs({ nightly: { cron: "0 3 * * *", run() {} } });
  // Deno refuses a second Deno.cron of one name: the second app threw before.
  const apps = [first, second].map((kv) => memoryApp({ routes: {}, jobs }, { kv }));
  await Promise.all(apps.map((app) => app.close()));
  const again = memoryApp({ routes: {}, jobs }, { kv: first });
  await again.close(); // the cron ended with the last app: no timer left for the sanitizer

  // Every process's Deno.cron fires for the slot; one enqueue wins.
  const at = Date.UTC(2026, 10, 28, 3, 0, 0);
  const target = { kv: first, jobs, name: "nightly" };
  assert.equal(await enqueueSlot(target, at), true);
  assert.equal(await enqueueSlot(target, at), false);
  assert.equal(await enqueueSlot(target, at + 24 * 60 * 60_000), true);
});

Deno.test("attack 22: a key of a cron job's slot is its schedule's: taken by hand, it skipped the slot", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ nightly: { cron: "0 3 * * *", run() {} }, reply: { run() {} } });
  const at = Date.UTC(2026, 10, 29, 3, 0, 0);
  // A client's id used as the key (a webhook's delivery id): tomorrow's slot, spelled out.
  const key = `cron:nightly:${new Date(at).toISOString()}`;
  // Before: enqueued (true), and the slot's own enqueue then found its key taken: no 03:00 run.
  assert.throws(() => jobs.add(kv.atomic(), "nightly", undefined, { key }), SlotKeyError);
  await assert.rejects(jobs.enqueue(kv, "nightly", undefined, { key }), SlotKeyError);
  assert.equal(await enqueueSlot({ kv, jobs, name: "nightly" }, at), true);
  // Another job's key may read so: it has no slots.
  assert.equal(await jobs.enqueue(kv, "reply", undefined, { key }), true);
});

Deno.test("a client's id shaped as a cron job's slot key, passed on by a handler: a 400 the product can tell apart, no failure line", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const jobs = defineJobs({ nightly: { cron: "0 3 * * *", run() {} } });
  const inbound: RouteModule = {
    handler: {
      async POST(req, ctx) {
        const key = req.headers.get("x-delivery") ?? undefined;
        await jobs.enqueue(kvOf(ctx), "nightly", undefined, { key });
        return new Response(null, { status: 202 });
      },
    },
  };
  const app = memoryApp({ routes: { "inbound.ts": inbound }, jobs }, { kv });
  const res = await app.request("/inbound", {
    method: "POST",
    headers: { "x-delivery": "cron:nightly:2026-11-29T03:00:00.000Z", accept: "application/json" },
  });
  // Before: a TypeError, so a 500 with a digest and an error line for a client's value.
  assert.equal(res.status, 400);
  assert.deepEqual(await res.json(), {
    error: { status: 400, message: "This id is reserved: use another.", code: "reserved_key" },
  });
  assert.deepEqual(logs.lines.filter((line) => line.level === "error"), []);
  const refused = await jobs.enqueue(kv, "nightly", undefined, { key: "cron:nightly:x" })
    .catch((error) => error);
  assert.ok(refused instanceof SlotKeyError);
  assert.deepEqual([refused.job, refused.key], ["nightly", "cron:nightly:x"]);
  await app.close();
});

Deno.test("cron slots missed past the catch-up are dropped with one warn line naming the job, how many and the oldest", () => {
  using logs = captureLogs();
  const hourly = scheduleOf("hourly", "0 * * * *");
  const at = Date.UTC(2026, 10, 28, 3, 0, 0);
  const day = 24 * 60 * 60_000;
  // Stopped from yesterday's 03:00 slot to today's 03:00: 24 slots missed, the latest 10 kept.
  // Before, the other 14 went without a line.
  const caught = dueSlots(hourly, at, at - day, "hourly");
  assert.equal(caught.length, 10);
  const warned = logs.lines.filter((line) => line.level === "warn");
  assert.equal(warned.length, 1, JSON.stringify(logs.lines));
  const [line] = warned;
  assert.equal(line.job, "hourly");
  assert.equal(line.dropped, 14);
  assert.equal(line.oldest, new Date(at - day + 60 * 60_000).toISOString());
  assert.match(String(line.msg), /hourly: 14 missed slots are not caught up/);
  // Nothing missed, nothing dropped: no line.
  dueSlots(hourly, at + 60 * 60_000, at, "hourly");
  dueSlots(hourly, at + 60 * 60_000, at + 60 * 60_000, "hourly");
  assert.equal(logs.lines.filter((line) => line.level === "warn").length, 1);
});

Deno.test("a cron firing late is its slot's, however late: one run per slot, never two, never none", async () => {
  const nightly = scheduleOf("nightly", "0 3 * * *");
  const at = Date.UTC(2026, 10, 28, 3, 0, 0);
  const day = 24 * 60 * 60_000;
  // On time, a moment early (two clocks), or 90 s late (a retry, a busy process): the 03:00 slot.
  // Before, the slot was the minute of the firing: 90 s late was 03:01, a second run.
  for (const firing of [at + 12, at - 400, at + 90_000, at + 5 * 60 * 60_000]) {
    assert.deepEqual(dueSlots(nightly, firing), [at], new Date(firing).toISOString());
  }
  // A process that enqueued yesterday's slot, firing again for today's, late: today's only.
  assert.deepEqual(dueSlots(nightly, at + 90_000, at - day), [at]);
  // A second firing for a slot already enqueued here: nothing more.
  assert.deepEqual(dueSlots(nightly, at + 90_000, at), []);
  // A firing so late that the next slot's time has passed: the slot it missed is caught up.
  assert.deepEqual(dueSlots(nightly, at + day + 60_000, at - day), [at, at + day]);
  // At most ten, the latest: a process stopped for a month does not flood the queue.
  const caught = dueSlots(scheduleOf("hourly", "0 * * * *"), at + 30 * day, at - day);
  assert.equal(caught.length, 10);
  assert.equal(caught.at(-1), at + 30 * day);
  // None older than a week, whose key (the other processes' enqueue on time) KV has forgotten:
  // before, a process suspended for ten days ran the slots of days 1 to 3 a second time.
  const week = 7 * day;
  const resumed = dueSlots(nightly, at + 10 * day, at);
  assert.deepEqual(resumed, [4, 5, 6, 7, 8, 9, 10].map((n) => at + n * day));
  assert.ok(resumed.every((slot) => slot > at + 10 * day - week));

  // Every process's firing, on time or late, enqueues the slot's one run.
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ nightly: { cron: "0 3 * * *", run() {} } });
  const target = { kv, jobs, name: "nightly" };
  const [onTime] = dueSlots(nightly, at + 50);
  const [late] = dueSlots(nightly, at + 61_000);
  assert.equal(await enqueueSlot(target, onTime), true);
  assert.equal(
    await enqueueSlot(target, late),
    false,
    "the late firing ran the slot a second time",
  );
});

Deno.test("a cron firing whose enqueue fails: Deno.cron's retry enqueues its slot, not nothing", async () => {
  // Deno's own test hook: each firing of a cron comes this many ms after the last ends.
  Deno.env.set("DENO_CRON_TEST_SCHEDULE_OFFSET", "20");
  try {
    await using store = await Deno.openKv(":memory:");
    // The store refuses the first enqueue of a firing (a commit KV did not take).
    let failedAt: number | undefined;
    const kv = new Proxy(store, {
      get(target, key) {
        if (key === "atomic" && failedAt === undefined) {
          return () => {
            failedAt = Date.now();
            throw new Error("KV is unavailable for a moment");
          };
        }
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    // Hourly: the retry, 100 ms after the failure, is all but never past the next slot's time.
    const jobs = defineJobs({ tick: { cron: "0 * * * *", run() {} } });
    using _logs = captureLogs();
    const app = memoryApp({ routes: {}, jobs }, { kv });
    using watch = watchJobs(app, jobs);
    const tried = await watch.next("tick");
    // Before, the failed firing had marked its slot done: the next ran at the next hour's slot.
    const [slot] = dueSlots(scheduleOf("tick", "0 * * * *"), failedAt!);
    assert.equal(tried.id, `cron:tick:${new Date(slot).toISOString()}`);
    await app.close();
  } finally {
    Deno.env.delete("DENO_CRON_TEST_SCHEDULE_OFFSET");
  }
});

Deno.test("a cron schedule that is none is refused by defineJobs, naming the job and the schedule", () => {
  // Before, defineJobs took it, and Deno.cron refused it at createApp with its own words.
  for (const cron of ["61 * * * *", "* * * *", "0 0 3 * * *", "every night"]) {
    assert.throws(
      () => defineJobs({ nightly: { cron, run() {} } }),
      (error: Error) =>
        error instanceof TypeError &&
        error.message.startsWith(`Job "nightly": cron "${cron}" is no schedule (`),
      cron,
    );
  }
  defineJobs({ nightly: { cron: "*/15 2-4 * * MON-FRI", run() {} } });
});

Deno.test("defineJobs takes a schedule exactly when Deno.cron does, and reads its days of the week as Deno.cron does", () => {
  // Before, croner's defaults took nicknames, `?`, a day 0 and outer spaces (Deno.cron then
  // refused the app at start-up), refused `5/15` (which Deno.cron runs), and read `1` as Monday.
  const schedules = [
    "0 3 * * *",
    "@daily",
    "@hourly",
    "@weekly",
    "0 3 ? * *",
    "0 3 * * ?",
    " 0 3 * * *",
    "0 3 * * * ",
    "0 3 * * *\n",
    "0 3 * * 0",
    "0 3 * * 0-6",
    "0 3 * * 0#1",
    "0 3 * * 1-7",
    "0 3 * * 7",
    "0 3 * * 7#1",
    "0 3 * * 5L",
    "0 3 * * 1-7/2",
    "5/15 * * * *",
    "/10 * * * *",
    "0 3 L * *",
    "0 3 15W * *",
    "0 3 LW * *",
    "*/15 2-4 * * MON-FRI",
    "0 3 1 * MON",
    "61 * * * *",
    "0 0 3 * * *",
    "0 24 * * *",
    "*/61 * * * *",
    "0 3 * 13 *",
    "0 3 * * 8",
  ];
  const differ = schedules.filter((cron, i) => {
    const end = new AbortController();
    let deno = true;
    try {
      Deno.cron(`schedule ${i}`, cron, { signal: end.signal }, () => {});
    } catch {
      deno = false;
    }
    end.abort();
    let ours = true;
    try {
      defineJobs({ nightly: { cron, run() {} } });
    } catch {
      ours = false;
    }
    return deno !== ours;
  });
  assert.deepEqual(differ, [], "defineJobs and Deno.cron disagree");

  // Deno.cron's 1 is Sunday (saffron's numbering): a firing on Sunday 29 November 2026 at 03:00
  // is that day's slot, not the Monday before's.
  const sunday = Date.UTC(2026, 10, 29, 3, 0, 0);
  for (const cron of ["0 3 * * 1", "0 3 * * SUN", "0 3 * * 1#5", "0 3 * * 1L", "0 3 * * 1-7/2"]) {
    assert.deepEqual(dueSlots(scheduleOf("weekly", cron), sunday), [sunday], cron);
  }
});

Deno.test("one key for two jobs (a webhook's delivery id): each is enqueued and runs", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({
    reply: { run: async (_: undefined, job) => void await kv.set(["ran", job.name], job.id) },
    index: { run: async (_: undefined, job) => void await kv.set(["ran", job.name], job.id) },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  // Before: the second was refused (one key space for every job), and in one commit the second
  // job's delivery found the first's done mark and never ran.
  assert.equal(await jobs.enqueue(kv, "reply", undefined, { key: "delivery-7" }), true);
  assert.equal(await jobs.enqueue(kv, "index", undefined, { key: "delivery-7" }), true);
  assert.equal(await jobs.enqueue(kv, "index", undefined, { key: "delivery-7" }), false);
  assert.equal(await written(kv, ["ran", "reply"]), "delivery-7");
  assert.equal(await written(kv, ["ran", "index"]), "delivery-7");
  const both = jobs.add(
    jobs.add(kv.atomic(), "reply", undefined, { key: "d-8" }),
    "index",
    undefined,
    {
      key: "d-8",
    },
  );
  assert.equal((await both.commit()).ok, true);
  for (const name of ["reply", "index"]) {
    for await (const [entry] of kv.watch([["ran", name]])) if (entry.value === "d-8") break;
  }
  await app.close();
});

Deno.test("a store handle shared by apps: a closed app runs none of the jobs", async () => {
  await using kv = await Deno.openKv(":memory:");
  const N = 8;
  const ranBy: string[] = [];
  let allRan!: () => void;
  const finished = new Promise<void>((resolve) => allRan = resolve);
  const counting = (app: string) =>
    defineJobs({
      count: {
        run() {
          if (ranBy.push(app) === N) allRan();
        },
      },
    });
  const closed = memoryApp({ routes: {}, jobs: counting("closed") }, { kv });
  await closed.close();
  const open = counting("open");
  const app = memoryApp({ routes: {}, jobs: open }, { kv });
  for (let n = 0; n < N; n++) await open.enqueue(kv, "count", undefined);
  await finished;
  // Before: KV split the handle's messages between both apps' listeners (a listener ends only
  // with its handle), and the closed app ran every other job with its own code.
  assert.deepEqual(ranBy, Array(N).fill("open"));
  await app.close();
});

Deno.test("a job's key or payload past KV's limits: a KeyTooLongError or KvLimitError naming the job, not KV's TypeError at the commit", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ hook: { run(_: string) {} } });
  // The key is often a client's (a webhook's delivery id): an expected 400.
  await assert.rejects(
    jobs.enqueue(kv, "hook", "", { key: "d".repeat(2_100) }),
    (error: Error) => error instanceof KeyTooLongError && error.where === 'Job "hook"',
  );
  await assert.rejects(
    jobs.enqueue(kv, "hook", "x".repeat(70_000)),
    (error: Error) =>
      error instanceof KvLimitError && /Job "hook": KV value too large/.test(error.message),
  );
  assert.equal(await jobs.enqueue(kv, "hook", "", { key: "d".repeat(1_000) }), true);
});

Deno.test("a payload KV would keep as {} (FormData, URL, Headers, a class's instance) is refused at enqueue, naming the job and what to pass", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ hook: { run(_: unknown) {} } });
  class Point {
    constructor(readonly x: number) {}
  }
  const form = new FormData();
  form.set("email", "ada@example.com");
  const refused: [unknown, RegExp][] = [
    [form, /holds a FormData \(at payload\).*Object\.fromEntries\(form\)/],
    [{ link: new URL("https://example.com/") }, /holds a URL \(at payload\.link\).*url\.href/],
    [[1, { headers: new Headers() }], /holds a Headers \(at payload\[1\]\.headers\)/],
    [new Map([["p", new Point(1)]]), /holds a Point .*a plain object/],
  ];
  for (const [payload, message] of refused) {
    // Before, each was enqueued and reached `run` as {} (or a bare { x: 1 }).
    await assert.rejects(
      jobs.enqueue(kv, "hook", payload),
      (error: Error) =>
        error instanceof TypeError && /^Job "hook": /.test(error.message) &&
        message.test(error.message),
    );
    assert.throws(() => jobs.add(kv.atomic(), "hook", payload), TypeError);
  }
  // What KV keeps as it was still goes, nested and with a cycle.
  const cyclic: Record<string, unknown> = { at: new Date(), tags: new Set(["a"]) };
  cyclic.self = cyclic;
  const kept = [
    undefined,
    "text",
    12n,
    { plain: [1, { deeper: true }], none: null },
    Object.assign(Object.create(null), { bare: 1 }),
    new Map([["k", { at: new Date(0) }]]),
    new Uint8Array([1, 2]),
    /x/g,
    cyclic,
  ];
  for (const payload of kept) assert.equal(await jobs.enqueue(kv, "hook", payload), true);
});

Deno.test("a payload nested deeper than a recursive walk goes, which KV keeps, is enqueued and runs as it was; a large one is refused for its size before any walk", async () => {
  await using kv = await Deno.openKv(":memory:");
  const { promise: ran, resolve } = Promise.withResolvers<unknown>();
  const jobs = defineJobs({ hook: { run: (payload: unknown) => resolve(payload) } });
  // 2,500 levels: about 12 KB, well inside KV's 64 KiB, and KV's serializer takes it. Before, the
  // payload check recursed and overflowed the call stack at about 1,800: a RangeError, a 500.
  let deep: unknown = "bottom";
  for (let i = 0; i < 2_500; i++) deep = i % 2 ? [deep] : { deep };
  const app = memoryApp({ routes: {}, jobs }, { kv });
  assert.equal(await jobs.enqueue(kv, "hook", deep), true);
  // Read level by level: assert's deepEqual recurses, and would overflow on it.
  let got = await ran;
  let levels = 0;
  for (; typeof got === "object" && got !== null; levels++) {
    got = Array.isArray(got) ? got[0] : (got as { deep: unknown }).deep;
  }
  assert.deepEqual([levels, got], [2_500, "bottom"]);
  await app.close();
  // 100,000 URLs: the size check refuses it first (KvLimitError). Before, every element was
  // walked - a request's CPU for a payload KV refuses anyway - and the first URL refused.
  const many = Array.from({ length: 100_000 }, () => new URL("https://example.com/"));
  assert.throws(() => jobs.add(kv.atomic(), "hook", many), KvLimitError);
});

Deno.test("a payload whose message fits but whose dead letter (with its digest) would not: refused at enqueue", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ hook: { run(_: string) {} } });
  const message = (n: number) => ({ job: "hook", id: "k", payload: "x".repeat(n), attempt: 0 });
  // The largest message KV takes: one byte a character here (no length-prefix boundary near).
  const n = 60_000 + MAX_VALUE_BYTES - valueSize(message(60_000));
  assert.equal(valueSize(message(n)), MAX_VALUE_BYTES);
  // Before, it was enqueued: its dead letter, a digest and a time larger, was refused by kv.set
  // at its last failure - a rejection KV's queue retried and kept as its own, digest-less.
  await assert.rejects(
    jobs.enqueue(kv, "hook", message(n).payload, { key: "k" }),
    (error: Error) =>
      error instanceof KvLimitError && /Job "hook": KV value too large/.test(error.message),
  );
});

Deno.test("a retry KV's queue cannot take is refused by defineJobs, not found when the job fails", () => {
  for (const ms of [-1, Number.NaN, 31 * 24 * 60 * 60 * 1000]) {
    assert.throws(
      () => defineJobs({ send: { retries: [1_000, ms], run() {} } }),
      /Job "send": a retry of .* ms \(0 to 30 days/,
    );
  }
});

Deno.test("a test's jobRetries KV's queue cannot take is refused by createApp, as a job's own", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ send: { run() {} } });
  // Before, the app was made, and the bad retry was found by kv.enqueue at the job's first failure.
  assert.throws(
    () => memoryApp({ routes: {}, jobs }, { kv, jobRetries: [0, -1] }),
    /jobRetries: a retry of -1 ms \(0 to 30 days/,
  );
});

Deno.test("an app's close waits for its jobs under way, so the store may then be closed", async () => {
  await using kv = await Deno.openKv(":memory:");
  let started!: () => void;
  const running = new Promise<void>((resolve) => started = resolve);
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const jobs = defineJobs({
    slow: {
      async run(_: undefined, { kv }) {
        started();
        await released;
        await kv.set(["slow", "wrote"], true);
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  await jobs.enqueue(kv, "slow", undefined, { key: "s-1" });
  await running;
  const closed = app.close();
  release();
  await closed;
  // Before: close resolved at once, and the job's writes met a closed store ("Database is
  // closed", its mark never set: the job ran again elsewhere).
  assert.equal((await kv.get(["slow", "wrote"])).value, true);
  assert.equal((await kv.get(["_jobs", "done", "slow", "s-1"])).value, true);
});

Deno.test("docs/data.md's creditPoints: run twice (at least once), it credits once", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({
    creditPoints: {
      async run({ orderId, points }: { orderId: string; points: number }, { kv }) {
        const credited = ["orders", orderId, "credited"];
        await kv.atomic()
          .check({ key: credited, versionstamp: null }) // not yet credited, or nothing is written
          .set(credited, true)
          .sum(["points"], BigInt(points))
          .commit();
      },
    },
  });
  const context = { kv, name: "creditPoints", id: "o-1", signal: new AbortController().signal };
  await jobs.definitions.creditPoints.run({ orderId: "o-1", points: 5 }, context);
  await jobs.definitions.creditPoints.run({ orderId: "o-1", points: 5 }, context);
  assert.equal((await kv.get<Deno.KvU64>(["points"])).value?.value, 5n);
});

Deno.test("a job's try that never ends fails at its timeout, its signal aborted, and is tried again", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const signals: AbortSignal[] = [];
  const jobs = defineJobs({
    hangs: {
      timeout: 1,
      retries: [1],
      run(_: undefined, { signal }) {
        signal.addEventListener("abort", () => signals.push(signal));
        return new Promise<void>(() => {}); // a fetch to a provider that never answers
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  await jobs.enqueue(kv, "hangs", undefined, { key: "h-1" });
  // Before: the try held its message for ever - no line, no retry, no dead letter.
  await written(kv, ["_jobs", "dead", "hangs", "h-1"]);
  const failures = logs.lines.filter((line) => line.level === "error" && line.job === "hangs");
  assert.deepEqual(failures.map((line) => line.error.name), [
    "DeadlineExceeded",
    "DeadlineExceeded",
  ]);
  assert.equal(signals.length, 2);
  assert.ok(signals.every((signal) => signal.aborted));
  await app.close();
});

Deno.test("a backlog due at once runs at most `concurrency` jobs at a time, and every one of them", async () => {
  await using kv = await Deno.openKv(":memory:");
  const N = 10;
  let running = 0;
  let most = 0;
  const gates: (() => void)[] = [];
  let started = Promise.withResolvers<void>();
  let finished = 0;
  const allFinished = Promise.withResolvers<void>();
  const jobs = defineJobs({
    call: {
      async run() {
        most = Math.max(most, ++running);
        const gate = Promise.withResolvers<void>();
        gates.push(gate.resolve);
        started.resolve();
        await gate.promise; // a provider's answer, which the test gives
        running--;
        if (++finished === N) allFinished.resolve();
      },
    },
  }, { concurrency: 2 });
  // The backlog an outage leaves: every message due before the app listens.
  let backlog = kv.atomic();
  for (let n = 0; n < N; n++) backlog = jobs.add(backlog, "call", undefined);
  assert.equal((await backlog.commit()).ok, true);
  const app = memoryApp({ routes: {}, jobs }, { kv });
  for (let released = 0; released < N; released++) {
    // Two running (the bound), else every one left, before one is let go.
    while (gates.length < Math.min(released + 2, N)) {
      await started.promise;
      started = Promise.withResolvers<void>();
    }
    gates[released]();
  }
  await allFinished.promise;
  // Before: KV's listener ran all ten at once.
  assert.equal(most, 2);
  assert.equal(finished, N);
  await app.close();
});

Deno.test("a concurrency that is not a whole number of 1 or more is refused by defineJobs", () => {
  for (const concurrency of [0, -1, 1.5, Number.NaN]) {
    assert.throws(() => defineJobs({ send: { run() {} } }, { concurrency }), /a concurrency of/);
  }
  assert.equal(defineJobs({ send: { run() {} } }).concurrency, 10);
});

Deno.test("a job waiting for a slot when its app closes is left to KV, and runs in the next app", async () => {
  await using kv = await Deno.openKv(":memory:");
  const holding = Promise.withResolvers<string>();
  const release = Promise.withResolvers<void>();
  let runs = 0;
  const declare = (app: string) =>
    defineJobs({
      step: {
        async run(_: undefined, { id }) {
          if (runs++ === 0) { // whichever KV hands over first holds the one slot
            holding.resolve(id);
            await release.promise;
          }
          await kv.set(["ran", id], app);
        },
      },
    }, { concurrency: 1 });
  const first = declare("first");
  const both = first.add(
    first.add(kv.atomic(), "step", undefined, { key: "a" }),
    "step",
    undefined,
    {
      key: "b",
    },
  );
  assert.equal((await both.commit()).ok, true);
  // A tap on the real listener: once it has handed over both messages, one runs and one waits.
  const handedOver = Promise.withResolvers<void>();
  let deliveries = 0;
  const listen = kv.listenQueue.bind(kv);
  kv.listenQueue = (handler) =>
    listen((message) => {
      const handling = handler(message);
      if (++deliveries === 2) handedOver.resolve();
      return handling;
    });
  const app = memoryApp({ routes: {}, jobs: first }, { kv });
  const held = await holding.promise;
  await handedOver.promise;
  const closed = app.close();
  release.resolve();
  await closed;
  assert.equal((await kv.get(["ran", held])).value, "first");
  const next = memoryApp({ routes: {}, jobs: declare("next") }, { kv });
  // Before: the closed app ran it once its slot came free. Now KV delivers it again, to the open app.
  assert.equal(await written(kv, ["ran", held === "a" ? "b" : "a"]), "next");
  await next.close();
});

Deno.test("deadJobs reads `limit` (1000 by default) a call, and pages on from the last one read", async () => {
  await using kv = await Deno.openKv(":memory:");
  const N = 1_005;
  let writes = kv.atomic();
  for (let n = 0; n < N; n++) {
    const id = `d-${String(n).padStart(4, "0")}`;
    writes = writes.set(["_jobs", "dead", "send", id], { job: "send", id, payload: n });
    if (n % 500 === 499) {
      await writes.commit();
      writes = kv.atomic();
    }
  }
  await writes.commit();
  const first = await deadJobs(kv);
  assert.equal(first.length, 1_000);
  // Before: no way past the 1000th - the same first page again, the last five never seen.
  const rest = await deadJobs(kv, undefined, { after: first.at(-1) });
  assert.deepEqual(rest.map((dead) => dead.payload), [1_000, 1_001, 1_002, 1_003, 1_004]);
  const pages: number[] = [];
  let page = await deadJobs(kv, "send", { limit: 400 });
  while (page.length > 0) {
    pages.push(page.length);
    page = await deadJobs(kv, "send", { limit: 400, after: page.at(-1) });
  }
  assert.deepEqual(pages, [400, 400, 205]);
});

Deno.test("two apps in a process with one cron job name on two schedules: the second is refused, naming both", async () => {
  await using first = await Deno.openKv(":memory:");
  await using second = await Deno.openKv(":memory:");
  const app = memoryApp({
    routes: {},
    jobs: defineJobs({ nightly: { cron: "0 3 * * *", run() {} } }),
  }, { kv: first });
  // Before: the second app's job ran silently on the first's schedule.
  assert.throws(
    () =>
      memoryApp({
        routes: {},
        jobs: defineJobs({ nightly: { cron: "30 4 * * *", run() {} } }),
      }, { kv: second }),
    /Job "nightly": cron "30 4 \* \* \*", but an app open in this process runs it on "0 3 \* \* \*"/,
  );
  await app.close();
  // Closed, its schedule is free for another.
  const later = memoryApp({
    routes: {},
    jobs: defineJobs({ nightly: { cron: "30 4 * * *", run() {} } }),
  }, { kv: second });
  await later.close();
});

Deno.test("a job reads the app's settings: a provider's URL and key, as a test gives them", async () => {
  await using kv = await Deno.openKv(":memory:");
  const settings = defineSettings({
    MAIL_URL: v.pipe(v.string(), v.url()),
    MAIL_API_KEY: secret(v.pipe(v.string(), v.minLength(8))),
  });
  let sent!: (to: string) => void;
  const got = new Promise<string>((resolve) => sent = resolve);
  const jobs = defineJobs({
    mail: {
      run(_: undefined, job) {
        // The job's own context, as a handler's ctx: there was none to give, and the app's
        // settings could only be read from the environment, which nothing else reads.
        const { MAIL_URL, MAIL_API_KEY } = settings(job);
        sent(`${MAIL_URL} ${MAIL_API_KEY}`);
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs, settings }, {
    kv,
    settings: { MAIL_URL: "http://127.0.0.1:9/send", MAIL_API_KEY: "key-of-the-test" },
  });
  await jobs.enqueue(kv, "mail", undefined);
  assert.equal(await got, "http://127.0.0.1:9/send key-of-the-test");
  await app.close();
});

Deno.test("a test's jobRetries: a job with the product's minutes-long schedule dies at once", async () => {
  await using kv = await Deno.openKv(":memory:");
  let tries = 0;
  // As routes/_jobs.ts declares it for production: 1 s, then 10 minutes.
  const jobs = defineJobs({
    send: {
      retries: [1_000, 600_000],
      run() {
        tries++;
        throw new Error("mail provider said 503");
      },
    },
  });
  using _logs = captureLogs();
  const app = memoryApp({ routes: {}, jobs }, { kv, jobRetries: [0] });
  await jobs.enqueue(kv, "send", undefined, { key: "m-1" });
  // Before, the second try came 1 s later and the third 10 minutes after: no dead letter here.
  await written(kv, ["_jobs", "dead", "send", "m-1"]);
  assert.equal(tries, 2, "the first try and the one retry the test asked for");
  await app.close();
});

Deno.test("an app given a store already closed: its jobs' listener fails in a log line, not an unhandled rejection", async () => {
  using logs = captureLogs();
  const kv = await Deno.openKv(":memory:");
  kv.close();
  const jobs = defineJobs({ noop: { run() {} } });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  // Before: listenQueue rejected ("Queue already closed") with nobody to handle it, which ends a
  // process - and failed this test's module as an uncaught error.
  const line = await waitForLine(logs, (l) => String(l.msg).startsWith("Background jobs"));
  assert.equal(line.level, "error");
  await app.close();
});

/** The first captured line `matches`, once written (the listener fails after a turn or two). */
async function waitForLine(
  logs: ReturnType<typeof captureLogs>,
  matches: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  for (let turn = 0; turn < 100; turn++) {
    const found = logs.lines.find(matches);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  throw new Error(`no such line: ${JSON.stringify(logs.lines.map((l) => l.msg))}`);
}

Deno.test("deadJobs of one job, after another job's dead letter: a TypeError naming both, not KV's", async () => {
  await using kv = await Deno.openKv(":memory:");
  await assert.rejects(
    deadJobs(kv, "sendReply", { after: { job: "autoClose", id: "x" } }),
    (error: Error) =>
      error instanceof TypeError && error.message.includes('"autoClose"') &&
      error.message.includes('"sendReply"'),
  );
});

Deno.test("watchJobs: a test waits for the try of a job a handler enqueued, keyless, as soon as it ends", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({
    reply: {
      async run({ to }: { to: string }, { kv }) {
        await kv.set(["replied", to], true);
      },
    },
    breaks: {
      run() {
        throw new Error("the provider is down");
      },
    },
  });
  const inbound: RouteModule = {
    handler: {
      async POST(req, ctx) {
        const job = new URL(req.url).searchParams.get("job") as "reply" | "breaks";
        await jobs.enqueue(kvOf(ctx), job, { to: "ada" }); // no key: the test cannot know its id
        return new Response(null, { status: 202 });
      },
    },
  };
  const app = memoryApp({ routes: { "inbound.ts": inbound }, jobs }, { kv, jobRetries: [0] });
  using watch = watchJobs(app, jobs);
  using _logs = captureLogs();

  assert.equal((await app.request("/inbound?job=reply", { method: "POST" })).status, 202);
  const replied = await watch.next("reply");
  assert.equal(replied.digest, undefined, "it ran to the end");
  assert.deepEqual(replied.payload, { to: "ada" });
  assert.equal((await kv.get(["replied", "ada"])).value, true, "its work is done by then");

  // A failing job: each try ends with its digest; the last one's dead letter is written by then.
  assert.equal((await app.request("/inbound?job=breaks", { method: "POST" })).status, 202);
  const first = await watch.next("breaks");
  const last = await watch.next("breaks");
  assert.deepEqual([first.attempt, last.attempt], [0, 1]);
  assert.match(last.digest ?? "", /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
  const [dead] = await deadJobs(kv, "breaks");
  assert.equal(dead.digest, last.digest);

  // Bounded: a try that never comes is an error naming the job and what ended.
  await assert.rejects(
    watch.next("reply", { timeout: 20 }),
    /No try of the job "reply" ended within 20 ms; ended: reply \(attempt 0\), breaks/,
  );
  // A name no job has (a typo) is said at once, naming the jobs there are - not a wait of 5 s
  // that blames the job; and a job without a cron is not "no such job". (Past the types, which
  // name the declared jobs only, as a test in JS would.)
  await assert.rejects(
    watch.next("replies" as "reply"),
    /No job named "replies" in routes\/_jobs\.ts; its jobs: reply, breaks/,
  );
  await assert.rejects(watch.fireCron("reply"), /The job "reply" has no cron: enqueue it/);
  await assert.rejects(watch.fireCron("replies" as "reply"), /its jobs: reply, breaks/);
  await app.close();
});

Deno.test("watchJobs on the second app of a manifest open on one store sees the tries the first app ran", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ ping: { run() {} } });
  const first = memoryApp({ routes: {}, jobs }, { kv });
  const second = memoryApp({ routes: {}, jobs }, { kv });
  using watch = watchJobs(second, jobs);
  assert.equal(await jobs.enqueue(kv, "ping", undefined, { key: "p-1" }), true);
  // Before, the store's one listener ran it in the first app, and only its watchers were told.
  assert.equal((await watch.next("ping", { timeout: 2000 })).id, "p-1");
  await Promise.all([first.close(), second.close()]);
});

Deno.test("docs/testing.md's cron test: a cron job's slot fired now, its try awaited, once per slot", async () => {
  await using kv = await Deno.openKv(":memory:");
  // docs/data.md's autoClose, on its schedule of 03:00.
  const jobs = defineJobs({
    autoClose: {
      cron: "0 3 * * *",
      retries: [60_000],
      async run(_: undefined, { kv }) {
        await kv.set(["desk", "closed_at"], Date.now());
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  using watch = watchJobs(app, jobs);
  assert.equal(await watch.fireCron("autoClose"), true);
  const tried = await watch.next("autoClose"); // as soon as it ends, 5 s at most
  assert.equal(tried.digest, undefined, "it ran to the end");
  assert.equal(typeof (await kv.get(["desk", "closed_at"])).value, "number");
  // The same slot again (another process's Deno.cron): nothing more; the day after: its own run.
  assert.equal(await watch.fireCron("autoClose"), false);
  assert.equal(await watch.fireCron("autoClose", Date.now() + 24 * 60 * 60_000), true);
  assert.equal((await watch.next("autoClose")).digest, undefined);
  await assert.rejects(watch.fireCron("nightly" as "autoClose"), /No cron job named "nightly"/);
  await app.close();

  assert.throws(
    () => watchJobs(memoryApp({ routes: {} }, { kv }), jobs),
    /runs no background jobs/,
  );
  assert.throws(() => watchJobs({}, jobs), /an app made by createApp in this process/);
});

Deno.test("fireCron(at) enqueues the latest slot at or before at, also half a second before the next", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ autoClose: { cron: "0 3 * * *", run() {} } });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  using watch = watchJobs(app, jobs);
  const slot = Date.UTC(2030, 0, 2, 3);
  // Before, this enqueued the slot of 2 January, still half a second away.
  assert.equal(await watch.fireCron("autoClose", slot - 500), true);
  // Each run waited for: a slot due while another runs is skipped (the cron job's turn).
  await watch.next("autoClose");
  assert.equal(await watch.fireCron("autoClose", Date.UTC(2030, 0, 1, 4)), false, "1 January's");
  assert.equal(await watch.fireCron("autoClose", slot), true, "2 January's, at its time");
  await watch.next("autoClose");
  await app.close();
});

Deno.test("a next() still waiting when its watch is disposed rejects at once, its timer cleared", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ ping: { run() {} } });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  const watch = watchJobs(app, jobs);
  const waiting = watch.next("ping", { timeout: 5000 });
  watch[Symbol.dispose]();
  // Before, it kept its timer and rejected 5 s later, "No try of the job ... ended".
  await assert.rejects(waiting, /disposed/);
  await assert.rejects(watch.next("ping"), /disposed/);
  await app.close();
});

Deno.test("a delay past KV's 30 days (a reminder for an appointment months away) is taken, and the job waits until due", async () => {
  await using kv = await Deno.openKv(":memory:");
  let ranAt = 0;
  const jobs = defineJobs({ remind: { run: () => void (ranAt = Date.now()) } });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  // Before, KV's own TypeError at the commit ("Delay cannot be greater than 30 days"): a 500.
  assert.equal(await jobs.enqueue(kv, "remind", undefined, { delay: 40 * 86_400_000 }), true);
  // Such a message as KV delivers it after its 30 days, still short of due: it waits again.
  const due = Date.now() + 100;
  await kv.enqueue({ job: "remind", id: "r-1", payload: undefined, attempt: 0, due });
  await written(kv, ["_jobs", "done", "remind", "r-1"]);
  assert.ok(ranAt >= due, `ran ${due - ranAt} ms before it was due`);
  await app.close();
});

Deno.test("a delayed job's key is remembered a week past when it is due, not a week past its enqueue", async () => {
  await using store = await tempStore();
  const path = store.path;
  const jobs = defineJobs({ remind: { run() {} } });
  const week = 7 * 24 * 60 * 60 * 1000;
  const delay = 40 * 24 * 60 * 60 * 1000; // a reminder for an appointment 40 days away
  const enqueued = Date.now();
  {
    using kv = await Deno.openKv(path);
    assert.equal(await jobs.enqueue(kv, "remind", { id: "a-1" }, { key: "a-1", delay }), true);
  }
  // The key's entry is the store's only one with an expiry (the message is in KV's queue table).
  // Before: it expired a week after the enqueue, 33 days before the job ran, and the same key was
  // taken again meanwhile (a second reminder).
  const db = new DatabaseSync(path, { readOnly: true });
  const [{ expiration_ms }] = db.prepare("select expiration_ms from kv where expiration_ms >= 0")
    .all() as { expiration_ms: number }[];
  db.close();
  assert.ok(expiration_ms >= enqueued + delay + week, `expires ${expiration_ms - enqueued} ms on`);
});

Deno.test("a negative, NaN, infinite or millennia-long delay is a TypeError naming the job, not KV's at the commit", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ remind: { run() {} } });
  // 10^16 ms with a key: KV's "Invalid mutation: expireIn is too large" at the commit, before.
  for (const delay of [-1, NaN, Infinity, 1e16, 1e300]) {
    assert.throws(
      () => jobs.add(kv.atomic(), "remind", undefined, { delay }),
      (error: Error) =>
        error instanceof TypeError &&
        /^Job "remind": a delay of .* enqueue it with 0/.test(error.message),
    );
  }
});

Deno.test("a collection's write and its job in one commit: the booking and its reminder, both or neither", async () => {
  await using kv = await Deno.openKv(":memory:");
  const reminded: string[] = [];
  const jobs = defineJobs({ remind: { run: ({ id }: { id: string }) => void reminded.push(id) } });
  const bookings = collection("bookings", {
    schema: v.object({ slot: v.string(), state: v.picklist(["open", "cancelled"]) }),
    indexes: { bySlot: { key: (b) => b.state === "open" ? b.slot : undefined, unique: true } },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  const remind = (atomic: Deno.AtomicOperation, id: string) =>
    jobs.add(atomic, "remind", { id }, { key: id });

  const booked = await bookings.create(kv, { slot: "10:00", state: "open" }, { also: remind });
  // Before, `also` was not read: nothing enqueued, and the key was still free.
  assert.equal(await jobs.enqueue(kv, "remind", { id: booked.id }, { key: booked.id }), false);
  await written(kv, ["_jobs", "done", "remind", booked.id]);
  assert.deepEqual(reminded, [booked.id]);

  // Refused (the slot taken): no item, and no job.
  let called = 0;
  await assert.rejects(
    bookings.create(kv, { slot: "10:00", state: "open" }, { also: () => called++ }),
    ConflictError,
  );
  // An update that changes nothing commits nothing, and adds nothing either.
  await bookings.update(kv, booked.id, { state: "open" }, { also: () => called++ });
  assert.equal(called, 0);
  await bookings.update(kv, booked.id, { state: "cancelled" }, {
    also: (atomic, id) => jobs.add(atomic, "remind", { id }, { key: `${id}-cancelled` }),
  });
  await written(kv, ["_jobs", "done", "remind", `${booked.id}-cancelled`]);
  assert.deepEqual(reminded, [booked.id, booked.id]);
  await app.close();
});

Deno.test("an async `also` is awaited: what it adds after an await is in the write's commit, and its rejection is the write's", async () => {
  await using kv = await Deno.openKv(":memory:");
  const jobs = defineJobs({ remind: { run() {} } });
  const bookings = collection("bookings", { schema: v.object({ slot: v.string() }) });
  const booked = await bookings.create(kv, { slot: "09:00" }, {
    also: async (atomic, id) => {
      await Promise.resolve(); // a look-up of the product's before it adds its job
      jobs.add(atomic, "remind", { id }, { key: id });
    },
  });
  // Before, the write committed without waiting: no job, and the key was still free.
  assert.equal(await jobs.enqueue(kv, "remind", { id: booked.id }, { key: booked.id }), false);
  // Before, the write committed and the rejection was left unhandled (which ends Deno).
  await assert.rejects(
    bookings.create(kv, { slot: "09:30" }, {
      also: async () => {
        await Promise.resolve();
        throw new Error("no reminder for this slot");
      },
    }),
    /no reminder for this slot/,
  );
  assert.deepEqual((await bookings.list(kv)).items.map((item) => item.value.slot), ["09:00"]);
});

/**
 * An app on `kv` with one job, `slow` (on `cron`, if given), whose first run lasts until
 * `release()`; `started` lists each run's id.
 */
function slowJob(kv: Deno.Kv, cron?: string) {
  const started: string[] = [];
  const first = Promise.withResolvers<void>();
  const begun = Promise.withResolvers<void>();
  const second = Promise.withResolvers<void>();
  const jobs = defineJobs({
    slow: {
      cron,
      run(_: undefined, { id }) {
        started.push(id);
        if (started.length > 1) return second.resolve();
        begun.resolve();
        return first.promise;
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  return {
    jobs,
    app,
    started,
    begun: begun.promise,
    second: second.promise,
    release: first.resolve,
  };
}

/**
 * Sends `message` again, as KV does about a minute into a run that goes on (or once its process
 * died), and resolves once that delivery waits on the run (its `info` line) or ran (`ran`).
 */
async function deliverAgain(
  kv: Deno.Kv,
  logs: { lines: { msg?: unknown }[] },
  message: Record<string, unknown>,
  ran: Promise<void>,
): Promise<void> {
  const left = Promise.withResolvers<void>();
  const captured = console.log;
  console.log = (...args: unknown[]) => {
    captured(...args);
    if (logs.lines.some((line) => /while its run goes on, waiting/.test(String(line.msg)))) {
      left.resolve();
    }
  };
  try {
    await kv.enqueue(message);
    await within(Promise.race([left.promise, ran]), 30_000, "the delivery again");
  } finally {
    console.log = captured;
  }
}

/** Resolves once a delivery that waited on a run saw it end (its `info` line). */
async function ended(logs: { lines: { msg?: unknown }[] }): Promise<void> {
  const over = (line: { msg?: unknown }) => /the run it waited on has ended/.test(String(line.msg));
  await within(
    (async () => {
      while (!logs.lines.some(over)) await new Promise((resolve) => setTimeout(resolve, 50));
    })(),
    30_000,
    "the delivery again to see its run end",
  );
}

Deno.test("a cron job slower than its schedule does not run over itself: a slot due while the one before runs is skipped", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const { jobs, app, started, begun, release } = slowJob(kv, "* * * * *");
  const target = { kv, jobs, name: "slow" };
  const at = Date.UTC(2026, 10, 28, 4, 0, 0);
  const slot = (ms: number) => `cron:slow:${new Date(ms).toISOString()}`;
  assert.equal(await enqueueSlot(target, at), true);
  await begun;
  // The next slot comes while the first still runs: Deno.cron skips it, so do we, on every process.
  assert.equal(await enqueueSlot(target, at + 60_000), true);
  await written(kv, ["_jobs", "done", "slow", slot(at + 60_000)]);
  // Before: it ran beside the first (as many at once as the concurrency lets).
  assert.deepEqual(started, [slot(at)]);
  assert.ok(logs.lines.some((line) => line.level === "warn" && /skipped/.test(line.msg)));
  release();
  await written(kv, ["_jobs", "done", "slow", slot(at)]);
  // Once the run ended, the next slot runs.
  assert.equal(await enqueueSlot(target, at + 120_000), true);
  await written(kv, ["_jobs", "done", "slow", slot(at + 120_000)]);
  assert.deepEqual(started, [slot(at), slot(at + 120_000)]);
  await app.close();
});

Deno.test("a cron slot delivered again while its run goes on (KV's local store does, 62 s in) does not run twice", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  // A schedule that no real firing meets while the delivery again waits the run out (a beat).
  const { jobs, app, started, begun, second, release } = slowJob(kv, "0 4 1 1 *");
  const at = Date.UTC(2026, 0, 1, 4, 0, 0);
  const slot = `cron:slow:${new Date(at).toISOString()}`;
  assert.equal(await enqueueSlot({ kv, jobs, name: "slow" }, at), true);
  await begun;
  await deliverAgain(kv, logs, { job: "slow", id: slot, payload: undefined, keyed: true }, second);
  // Before: the delivery again took the turn as its own slot's and ran beside the first.
  assert.deepEqual(started, [slot]);
  release();
  await written(kv, ["_jobs", "done", "slow", slot]);
  await ended(logs);
  assert.deepEqual(started, [slot]);
  await app.close();
});

Deno.test("a job (no cron) delivered again while its try goes on (KV's local store does, 62 s in) does not run twice", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const { jobs, app, started, begun, second, release } = slowJob(kv);
  await jobs.enqueue(kv, "slow", undefined, { key: "k-1" });
  await begun;
  // The message again, as it was enqueued: what KV's re-send of it looks like to the listener.
  const message = { job: "slow", id: "k-1", payload: undefined, attempt: 0, keyed: true };
  await deliverAgain(kv, logs, message, second);
  // Before: only a cron slot held a lease; this ran a second time beside the first.
  assert.deepEqual(started, ["k-1"]);
  const waits = logs.lines.find((line) => /waiting/.test(String(line.msg)));
  assert.equal(waits?.msg, "Job slow: delivered again while its run goes on, waiting");
  assert.equal(waits?.job_id, "k-1");
  release();
  await written(kv, ["_jobs", "done", "slow", "k-1"]);
  // The delivery again waited the run out (acknowledged at once, nothing would send it again
  // should the run's process die), then left its outcome as it was.
  await ended(logs);
  assert.deepEqual(started, ["k-1"]);
  // The lease given back as the try ended: nothing of it is left in the store.
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["_jobs", "try"] })), []);
  await app.close();
});

Deno.test("a try whose lease was taken over meanwhile (a lapse) still marks itself done, and leaves the taker's lease", async () => {
  await using kv = await Deno.openKv(":memory:");
  const { jobs, app, begun, release } = slowJob(kv);
  await jobs.enqueue(kv, "slow", undefined, { key: "k-1" });
  await begun;
  // What a delivery again in another process writes once this one's lease lapsed.
  const lease = ["_jobs", "try", "slow", "k-1", 0];
  const taker = { until: Date.now() + 60_000, id: "k-1" };
  await kv.set(lease, taker);
  release();
  // The lease is given back in the commit of the try's done mark: refused here, the mark goes alone.
  await within(written(kv, ["_jobs", "done", "slow", "k-1"]), 10_000, "the done mark");
  assert.deepEqual((await kv.get(lease)).value, taker);
  await app.close();
});

Deno.test("a late firing's caught-up slots while a run holds the turn: each skipped, logged, none run twice", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const nightly = scheduleOf("nightly", "0 3 * * *");
  const day = 24 * 60 * 60_000;
  const at = Date.UTC(2026, 10, 28, 3, 0, 0);
  const started: string[] = [];
  const held = Promise.withResolvers<void>();
  const begun = Promise.withResolvers<void>();
  const jobs = defineJobs({
    nightly: {
      cron: "0 3 * * *",
      run(_: undefined, { id }) {
        started.push(id);
        begun.resolve();
        return started.length === 1 ? held.promise : undefined;
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  const target = { kv, jobs, name: "nightly" };
  const slot = (ms: number) => `cron:nightly:${new Date(ms).toISOString()}`;
  // Yesterday's slot runs on, another process's; this one's firing comes a day late and catches up.
  assert.equal(await enqueueSlot(target, at - day), true);
  await begun.promise;
  const caught = dueSlots(nightly, at + day + 60_000, at - day);
  assert.deepEqual(caught, [at, at + day]);
  for (const each of caught) assert.equal(await enqueueSlot(target, each), true);
  for (const each of caught) await written(kv, ["_jobs", "done", "nightly", slot(each)]);
  // Never beside the run under way, and never later either: marked done, the key taken.
  assert.deepEqual(started, [slot(at - day)]);
  const skipped = logs.lines.filter((line) => line.level === "warn" && /skipped/.test(line.msg));
  assert.deepEqual(skipped.map((line) => line.job_id).sort(), caught.map(slot));
  for (const each of caught) assert.equal(await enqueueSlot(target, each), false);
  held.resolve();
  await written(kv, ["_jobs", "done", "nightly", slot(at - day)]);
  // The turn given back: the next slot runs.
  assert.equal(await enqueueSlot(target, at + 2 * day), true);
  await written(kv, ["_jobs", "done", "nightly", slot(at + 2 * day)]);
  assert.deepEqual(started, [slot(at - day), slot(at + 2 * day)]);
  await app.close();
});
