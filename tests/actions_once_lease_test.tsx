/**
 * @module
 * A submission's claim is a lease (`lib/actions/once.ts`): a first post that never ends (its
 * process died) holds its key only while it could still be running - its deadline and as long
 * again - and then a repeat runs, once, however many race for it, on two apps on one KV file; a
 * first slower than its lease neither overwrites nor releases the outcome of the repeat that ran;
 * an action marked `once = false` neither claims nor settles.
 */
import assert from "node:assert/strict";
import { captureLogs } from "shell/testing";
import { fillForm } from "../lib/testing/form.ts";
import type { App } from "../lib/server.ts";
import { decodeResult, encodeCall, ONCE_FIELD } from "../lib/shared/action_wire.ts";
import { actionIdOf, memoryApp } from "./helpers/app.ts";
import { tempStore } from "./helpers/kv.ts";
import { fromPage, ORIGIN, post, probeFiles } from "./helpers/probe_app.tsx";

const FILE = "routes/_lease/actions.ts";

/** The next runs of `slow` wait for these, in order; later runs go straight through. */
const holds: Promise<"return" | "throw">[] = [];
let runs = 0;

/** Counts its runs and answers with the count: which run an outcome came from. */
async function slow(_previous: unknown, _form: FormData): Promise<{ run: number }> {
  const run = ++runs;
  const hold = holds.shift();
  if (hold && await hold === "throw") throw new Error("the slow first failed at last");
  return { run };
}

let toggles = 0;
/** Sets a value: sent twice it is still that value, so it runs per post. */
async function setDone(_form: FormData): Promise<void> {
  toggles++;
  await Promise.resolve();
}
setDone.once = false;

const ids = { slow: actionIdOf(FILE, "slow"), setDone: actionIdOf(FILE, "setDone") };

const files = {
  ...probeFiles,
  routes: {
    ...probeFiles.routes,
    "done.tsx": {
      default: () => (
        <form action={setDone} id="done">
          <button type="submit">Done</button>
        </form>
      ),
    },
  },
  actions: { ...probeFiles.actions, [FILE]: { slow, setDone } },
};

/** A run of `slow` that waits until `release` says how it ends. */
function holdNextRun(): (how: "return" | "throw") => void {
  let release!: (how: "return" | "throw") => void;
  // Held, it keeps the event loop alive as a server's listener would (the deadline's timer won't).
  const alive = setInterval(() => {}, 60_000);
  holds.push(new Promise((resolve) => release = resolve));
  return (how) => {
    clearInterval(alive);
    release(how);
  };
}

/** The stub's call of `slow` with the submission key `key`. */
async function callSlow(app: App, key: string): Promise<Response> {
  const form = new FormData();
  form.set("note", "pay the invoice");
  return await app.request(`/_action/${ids.slow}`, {
    method: "POST",
    body: encodeCall([{}, form], key),
    headers: { Accept: "application/json", ...fromPage() },
  });
}

/** What an answer says: the run it carries, or its refusal's code. */
async function said(res: Response): Promise<number | string> {
  if (res.status === 200) return (decodeResult(await res.text()) as { run: number }).run;
  const body = await res.text();
  return res.status === 409 ? JSON.parse(body).error.code : res.status;
}

/**
 * Repeats of `key` sent to each of `apps` at once, again and again, until one runs or answers an
 * outcome: the answers of that round. Each round waits in the server (half the deadline) while
 * the first holds the key; 40 rounds are ten times its lease.
 */
async function repeatUntilAnswered(apps: App[], key: string): Promise<(number | string)[]> {
  for (let round = 0; round < 40; round++) {
    const answers = await Promise.all(
      apps.map(async (app) => await said(await callSlow(app, key))),
    );
    if (answers.some((answer) => typeof answer === "number")) return answers;
    assert.deepEqual(new Set(answers), new Set(["already_sent"]));
  }
  throw new Error("the first's claim was still held after ten times its lease");
}

/**
 * Resolves when a JSON log line matching `pattern` is printed (inside `captureLogs`); rejects if
 * none is within 5 s.
 */
function lineArrives(pattern: RegExp): Promise<void> & Disposable {
  const captured = console.log;
  let arrived!: () => void;
  let timer: ReturnType<typeof setTimeout>;
  const promise = new Promise<void>((resolve, reject) => {
    arrived = resolve;
    timer = setTimeout(() => reject(new Error(`no log line ${pattern}`)), 5_000);
  });
  console.log = (...args: unknown[]) => {
    captured(...args);
    if (pattern.test(String(args[0]))) arrived();
  };
  return Object.assign(promise, {
    [Symbol.dispose]: () => {
      clearTimeout(timer);
      console.log = captured;
    },
  });
}

// The deadline is short so that the lease (the deadline and as long again) lapses soon.
// (A repeat that takes the key late in its wait still has half its deadline to run and settle.)
const OPTIONS = { origins: [ORIGIN], requestTimeoutMs: 500 };

Deno.test("a first that never ends holds its key for its lease, not the hour: then one repeat runs", async () => {
  using _logs = captureLogs();
  await using store = await tempStore();
  const path = store.path;
  using one = await Deno.openKv(path);
  using two = await Deno.openKv(path);
  const first = memoryApp(files, { kv: one, ...OPTIONS });
  const second = memoryApp(files, { kv: two, ...OPTIONS });
  runs = 0;
  const release = holdNextRun(); // not released until the end: as if its process had died
  const key = crypto.randomUUID();
  // The first runs past its deadline, and is answered as a failure; its action never ends.
  assert.equal(await said(await callSlow(first, key)), 500);
  // Before: every repeat got already_sent for the hour. Now, once the lease lapsed, the repeats
  // racing on both apps run it once: the other gets that run's outcome (or already_sent, when
  // its wait ended first).
  const answers = await repeatUntilAnswered([first, second], key);
  assert.equal(runs, 2, `one repeat ran: ${answers}`);
  assert.ok(answers.includes(2));
  assert.ok(answers.every((answer) => answer === 2 || answer === "already_sent"), `${answers}`);
  // Later repeats get that outcome, kept for the hour.
  assert.equal(await said(await callSlow(second, key)), 2);
  assert.equal(runs, 2);
  using warned = lineArrives(/outlasted its claim/);
  release("throw");
  await warned;
});

Deno.test("a first slower than its lease neither overwrites nor releases the repeat's outcome", async (t) => {
  using logs = captureLogs();
  await using store = await tempStore();
  const path = store.path;
  using one = await Deno.openKv(path);
  using two = await Deno.openKv(path);
  const first = memoryApp(files, { kv: one, ...OPTIONS });
  const second = memoryApp(files, { kv: two, ...OPTIONS });

  for (const how of ["return", "throw"] as const) {
    await t.step(`the slow first's action ends (${how}) after a repeat ran`, async () => {
      runs = 0;
      const release = holdNextRun();
      const key = crypto.randomUUID();
      assert.equal(await said(await callSlow(first, key)), 500);
      const answers = await repeatUntilAnswered([second], key);
      assert.deepEqual(answers, [2]);
      using warned = lineArrives(/outlasted its claim/);
      release(how);
      await warned;
      // Before: the first's late outcome (run 1) replaced the repeat's, or its release (it threw)
      // deleted it and the next repeat ran a third time.
      assert.equal(await said(await callSlow(first, key)), 2);
      assert.equal(await said(await callSlow(second, key)), 2);
      assert.equal(runs, 2);
    });
  }
  assert.equal(
    logs.lines.filter((line) => /outlasted its claim/.test(line.msg)).length,
    2,
  );
});

Deno.test("an action marked once = false neither claims nor settles: no KV write for its posts", async () => {
  using _logs = captureLogs();
  using kv = await Deno.openKv(":memory:");
  const app = memoryApp(files, { kv, ...OPTIONS });
  const submissions = async () => (await Array.fromAsync(kv.list({ prefix: ["_app", "once"] })));
  toggles = 0;
  runs = 0;
  // Its form carries no key: nothing to draw at render.
  const html = await (await app.request("/done")).text();
  assert.ok(html.includes("$ACTION_REF_"), "the page has its form");
  assert.ok(!html.includes(ONCE_FIELD), "no submission key in its form");
  const form = await fillForm(html, `${ORIGIN}/done`, { action: `/_action/${ids.setDone}` }, {});
  for (let n = 0; n < 2; n++) {
    assert.equal((await post(app, ids.setDone, form.entries, fromPage("/done"))).status, 303);
  }
  // The stub sends a key with every call that carries a form: ignored, the call runs each time.
  const key = crypto.randomUUID();
  for (let n = 0; n < 2; n++) {
    const res = await app.request(`/_action/${ids.setDone}`, {
      method: "POST",
      body: encodeCall([new FormData()], key),
      headers: { Accept: "application/json", ...fromPage("/done") },
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
  }
  assert.equal(toggles, 4);
  // Before: each post claimed its key and kept its outcome in KV.
  assert.deepEqual(await submissions(), []);
  // A keyed action's post still does (the count above can see them).
  assert.equal(await said(await callSlow(app, crypto.randomUUID())), 1);
  assert.equal((await submissions()).length, 1);
  await app.close();
});
