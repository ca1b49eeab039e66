/**
 * @module
 * A submission's effect happens once (`lib/actions/once.ts`): two posts of one form rendered
 * without JavaScript - to two apps on one KV file, as two workers or isolates - make one wall post
 * and both land where the first did; a stub's call sent again with its key makes one and answers
 * the first's result; a new render of the form, or the same key with other content, is another
 * submission; a repeat whose first outcome was too large to keep is refused with `already_sent`;
 * a key the server and the stub cannot have made is refused (400).
 */
import assert from "node:assert/strict";
import { decodeResult, encodeCall, ONCE_FIELD } from "../lib/shared/action_wire.ts";
import { fillForm } from "../lib/testing/form.ts";
import type { App } from "../lib/server.ts";
import { latestPosts } from "./fixture/routes/_wall/posts.ts";
import { memoryApp } from "./helpers/app.ts";
import { tempStore } from "./helpers/kv.ts";
import { fromPage, ids, ORIGIN, post, probeFiles, ran } from "./helpers/probe_app.tsx";
import { toAbout } from "./helpers/probe_actions.ts";
import { MEMORY_MOST, submissionsInMemory } from "../lib/actions/once.ts";
import { submissionsInKv } from "../lib/actions/once_kv.ts";
import { captureLogs } from "shell/testing";
import { ONCE_TTL_MS, submissionId } from "../lib/actions/once.ts";
import { TestClient } from "../lib/testing.ts";
import { actionIds, authFiles, storedUser } from "./helpers/auth.tsx";

const WALL = `${ORIGIN}/wall`;

/** The wall's form as a browser without JavaScript would send it, from a fresh render. */
async function wallForm(app: App, message: string): Promise<FormData> {
  const html = await (await app.request("/wall")).text();
  const form = await fillForm(html, WALL, { action: `/_action/${ids.post}` }, {
    name: "Ada",
    message,
  });
  return form.entries;
}

function postForm(app: App, entries: FormData): Promise<Response> {
  return post(app, ids.post, entries, fromPage("/wall"));
}

/** A stub's call of the wall's action with `key`, as `action_client.ts` sends it. */
async function callWall(app: App, message: string, key: string): Promise<Response> {
  const fields = new FormData();
  fields.set("name", "Ada");
  fields.set("message", message);
  return await app.request(`/_action/${ids.post}`, {
    method: "POST",
    body: encodeCall([{}, fields], key),
    headers: { Accept: "application/json", ...fromPage("/wall") },
  });
}

async function messages(kv: Deno.Kv): Promise<string[]> {
  return (await latestPosts(kv)).map((one) => one.message);
}

Deno.test("a submission's effect happens once", async (t) => {
  await using store = await tempStore();
  const path = store.path;
  // Two handles on one file: two workers, processes or isolates of one store.
  using one = await Deno.openKv(path);
  using two = await Deno.openKv(path);
  const first = memoryApp(probeFiles, { kv: one });
  const second = memoryApp(probeFiles, { kv: two });

  await t.step("a form renders a new submission key each time", async () => {
    const [a, b] = [await wallForm(first, "x"), await wallForm(first, "x")];
    assert.match(String(a.get(ONCE_FIELD)), /^[0-9a-f-]{36}$/);
    assert.notEqual(a.get(ONCE_FIELD), b.get(ONCE_FIELD));
  });

  await t.step("two posts of one form, on two workers at once, make one post", async () => {
    const entries = await wallForm(first, "double click");
    const answers = await Promise.all([postForm(first, entries), postForm(second, entries)]);
    for (const res of answers) {
      assert.equal(res.status, 303);
      assert.equal(res.headers.get("location"), "/wall");
      // Both carry the form's state to the page: whichever the browser follows shows it.
      assert.match(res.headers.get("set-cookie") ?? "", /app-form-state=/);
    }
    assert.deepEqual(await messages(one), ["double click"]);
  });

  await t.step("posted again later (Back, refresh), it still makes none", async () => {
    const entries = await wallForm(second, "re-posted");
    assert.equal((await postForm(second, entries)).status, 303);
    const again = await postForm(first, entries);
    assert.equal(again.status, 303);
    assert.equal(again.headers.get("location"), "/wall");
    assert.deepEqual(await messages(one), ["re-posted", "double click"]);
  });

  await t.step("a new render of the form is another submission", async () => {
    await postForm(first, await wallForm(first, "twice on purpose"));
    await postForm(second, await wallForm(second, "twice on purpose"));
    assert.deepEqual((await messages(two)).slice(0, 2), ["twice on purpose", "twice on purpose"]);
  });

  await t.step("the same key with other fields is another submission", async () => {
    const entries = await wallForm(first, "before Back");
    await postForm(first, entries);
    entries.set("message", "after Back, changed");
    await postForm(second, entries);
    assert.deepEqual((await messages(one)).slice(0, 2), ["after Back, changed", "before Back"]);
  });

  await t.step("a stub's call sent again with its key makes one, and the same result", async () => {
    const key = crypto.randomUUID();
    const [a, b] = await Promise.all([
      callWall(first, "retried call", key),
      callWall(second, "retried call", key),
    ]);
    const later = await callWall(first, "retried call", key);
    const results = await Promise.all([a, b, later].map(async (res) => {
      assert.equal(res.status, 200);
      return decodeResult(await res.text());
    }));
    assert.deepEqual(results[1], results[0]);
    assert.deepEqual(results[2], results[0]);
    assert.deepEqual((await messages(two)).filter((m) => m === "retried call"), ["retried call"]);
    // Another call (a new key) is another submission.
    assert.equal((await callWall(second, "retried call", crypto.randomUUID())).status, 200);
    assert.equal((await messages(two)).filter((m) => m === "retried call").length, 2);
  });

  await t.step(
    "the same key with another file of the same name and size is another submission",
    async () => {
      using logs = captureLogs();
      const key = crypto.randomUUID();
      const send = async (app: App, text: string) => {
        const form = new FormData();
        form.set("file", new File([text], "photo.txt", { type: "text/plain" }));
        const res = await app.request(`/_action/${ids.upload}`, {
          method: "POST",
          body: encodeCall([form], key),
          headers: { Accept: "application/json", ...fromPage() },
        });
        assert.equal(res.status, 200);
        return decodeResult(await res.text()) as { text: string };
      };
      assert.equal((await send(first, "first photo")).text, "first photo");
      // Back, another file picked of the same name and size, sent again: before, a repeat, and
      // answered with the first file's result while this one was never seen.
      assert.equal((await send(second, "other photo")).text, "other photo");
      // The same file sent again (the stub's resend) is still a repeat.
      assert.equal((await send(first, "other photo")).text, "other photo");
      assert.deepEqual(ran(logs.lines), ["upload", "upload"]);
    },
  );

  await t.step(
    "a repeat of an action that set a cookie: already_sent, not an answer without it",
    async () => {
      using logs = captureLogs();
      const key = crypto.randomUUID();
      const call = (app: App) =>
        app.request(`/_action/${ids.welcome}`, {
          method: "POST",
          body: encodeCall([{}, new FormData()], key),
          headers: { Accept: "application/json", ...fromPage() },
        });
      const res = await call(first);
      assert.equal(res.status, 200);
      assert.match(res.headers.get("set-cookie") ?? "", /welcomed=yes/);
      await res.body?.cancel();
      // The first's answer lost (the connection dropped), the stub sends again: before, 200 with
      // the result and no cookie - a sign-in that landed signed out.
      const again = await call(second);
      assert.equal(again.status, 409);
      assert.equal((await again.json()).error.code, "already_sent");
      assert.deepEqual(ran(logs.lines), ["welcome"]);
    },
  );

  await t.step(
    "a repeat of an action that only deleted a cookie (a sign-out) gets its result",
    async () => {
      using logs = captureLogs();
      const key = crypto.randomUUID();
      const call = (app: App) =>
        app.request(`/_action/${ids.farewell}`, {
          method: "POST",
          body: encodeCall([{}, new FormData()], key),
          headers: { Accept: "application/json", ...fromPage() },
        });
      const res = await call(first);
      assert.match(res.headers.get("set-cookie") ?? "", /welcomed=;/);
      assert.equal(decodeResult(await res.text()), "farewell");
      const again = await call(second);
      assert.equal(again.status, 200);
      assert.equal(decodeResult(await again.text()), "farewell");
      assert.deepEqual(ran(logs.lines), ["farewell"]);
    },
  );

  await t.step(
    "an action that failed or refused released its key: sent again, it runs again",
    async () => {
      using logs = captureLogs();
      for (const [action, status] of [["fail", 500], ["refuse", 403]] as const) {
        const key = crypto.randomUUID();
        for (const app of [first, second]) {
          const res = await app.request(`/_action/${ids[action]}`, {
            method: "POST",
            body: encodeCall([new FormData()], key),
            headers: { Accept: "application/json", ...fromPage() },
          });
          assert.equal(res.status, status);
          await res.body?.cancel();
        }
      }
      assert.deepEqual(ran(logs.lines), ["fail", "fail", "refuse", "refuse"]);
    },
  );

  await t.step("a repeat whose first result was too large to keep: already_sent", async () => {
    using logs = captureLogs();
    const key = crypto.randomUUID();
    const said = new FormData();
    said.set("said", "x".repeat(20_000));
    const big = async (app: App) =>
      await app.request(`/_action/${ids.remember}`, {
        method: "POST",
        body: encodeCall([{}, said], key),
        headers: { Accept: "application/json", ...fromPage() },
      });
    const res = await big(first);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const again = await big(second);
    assert.equal(again.status, 409);
    const { error } = await again.json();
    assert.equal(error.code, "already_sent");
    assert.match(error.message, /sent already/);
    assert.deepEqual(ran(logs.lines), ["remember"]);
  });

  await t.step("a key neither the server nor the stub makes is refused", async () => {
    const res = await callWall(first, "odd key", "x".repeat(65));
    assert.equal(res.status, 400);
    await res.body?.cancel();
    assert.ok(!(await messages(one)).includes("odd key"));
  });
});

Deno.test("a form on a page of the shared cache carries no submission key: two visitors' same posts both run", async () => {
  using logs = captureLogs();
  using kv = await Deno.openKv(":memory:");
  const files = {
    ...probeFiles,
    routes: {
      ...probeFiles.routes,
      "cached.tsx": {
        cache: { maxAge: 60 },
        default: () => (
          <form action={toAbout} id="to-about">
            <button type="submit">To about</button>
          </form>
        ),
      },
    },
  };
  const app = memoryApp(files, { kv, origins: [ORIGIN] });
  const miss = await app.request("/cached");
  assert.equal(miss.headers.get("x-cache"), "MISS");
  // The render's own visitor may keep its key: it is theirs alone, so no CDN may keep the answer
  // for every visitor. Before: the miss was public (s-maxage) as the hits are, and a CDN's copy
  // gave every visitor that one key - the second's same post skipped, answered with the first's.
  assert.ok((await miss.text()).includes(ONCE_FIELD));
  assert.equal(miss.headers.get("cache-control"), "private, no-cache");
  const hit = await app.request("/cached");
  assert.equal(hit.headers.get("x-cache"), "HIT");
  assert.equal(hit.headers.get("cache-control"), "public, max-age=0, s-maxage=60");
  const html = await hit.text();
  assert.ok(html.includes("$ACTION_REF_"), "the stored page still has its form");
  // Before: the key of the render was in the stored page, every visitor's the same, and the
  // second visitor's post was skipped and answered with the first's outcome.
  assert.ok(!html.includes(ONCE_FIELD), "no submission key in the stored page");
  for (let visitor = 0; visitor < 2; visitor++) {
    const form = await fillForm(
      html,
      `${ORIGIN}/cached`,
      { action: `/_action/${ids.toAbout}` },
      {},
    );
    const res = await post(app, ids.toAbout, form.entries, fromPage("/cached"));
    assert.equal(res.status, 303);
  }
  assert.deepEqual(ran(logs.lines), ["toAbout", "toAbout"]);
  await app.close();
});

Deno.test("a repeat waits for the first no longer than its request's deadline: already_sent, not a failure", async () => {
  using logs = captureLogs();
  using kv = await Deno.openKv(":memory:");
  const app = memoryApp(probeFiles, { kv, requestTimeoutMs: 400 });
  const key = crypto.randomUUID();
  const body = () => encodeCall([{}, new FormData()], key);
  // The first of this submission is still running (slow, or its process died): its claim is taken.
  const id = `${ids.welcome}.${await submissionId(key, body())}`;
  await kv.set(["_app", "once", id], { until: Date.now() + ONCE_TTL_MS });
  const res = await app.request(`/_action/${ids.welcome}`, {
    method: "POST",
    body: body(),
    headers: { Accept: "application/json", ...fromPage() },
  });
  // Before: it waited the whole 5 s, and the deadline (400 ms) ended it as a failure (500).
  assert.equal(res.status, 409);
  assert.equal((await res.json()).error.code, "already_sent");
  assert.deepEqual(ran(logs.lines), []);
  assert.ok(!logs.lines.some((line) => line.level === "error"));
  await app.close();
});

Deno.test("a refusal whose key KV fails to release answers as the refusal, not as KV's failure", async () => {
  using logs = captureLogs();
  using kv = await Deno.openKv(":memory:");
  const app = memoryApp(probeFiles, { kv });
  // The release of the claim (`settle` with no outcome: the commit after the claim's) meets a
  // store that fails its write.
  const atomic = kv.atomic.bind(kv);
  let commits = 0;
  kv.atomic = () => {
    const op = atomic();
    if (++commits > 1) op.commit = () => Promise.reject(new Error("database is locked"));
    return op;
  };
  const res = await app.request(`/_action/${ids.refuse}`, {
    method: "POST",
    body: encodeCall([new FormData()], crypto.randomUUID()),
    headers: { Accept: "application/json", ...fromPage() },
  });
  // Before: KV's error replaced the action's refusal, answered as a failure (500).
  assert.equal(res.status, 403);
  assert.equal((await res.json()).error.message, "Not now");
  assert.deepEqual(ran(logs.lines), ["refuse"]);
  assert.ok(
    logs.lines.some((line) =>
      line.level === "warn" && /database is locked/.test(line.error?.message)
    ),
  );
  await app.close();
});

Deno.test("an app without KV keeps at most MEMORY_MOST submissions, the oldest forgotten first", async () => {
  const submissions = submissionsInMemory();
  assert.ok("held" in (await submissions.claim("first", ONCE_TTL_MS) as object));
  assert.equal(await submissions.claim("first", ONCE_TTL_MS), "running", "a repeat while it runs");
  for (let n = 0; n < MEMORY_MOST; n++) await submissions.claim(`post-${n}`, ONCE_TTL_MS);
  // Before: every submission of the hour was kept (and scanned on each call), whatever a client
  // sent; now the oldest goes once the memory is full, and the newest are still known.
  assert.equal(await submissions.read("first"), "gone");
  assert.equal(await submissions.claim(`post-${MEMORY_MOST - 1}`, ONCE_TTL_MS), "running");
});

Deno.test("an app without KV: a lapsed claim is taken by the next post, and its first's settle then changes nothing", async () => {
  const submissions = submissionsInMemory();
  const outcome = { result: "second's" };
  // A lease already over: the first's process is taken for dead.
  const first = await submissions.claim("slow", -1);
  const second = await submissions.claim("slow", ONCE_TTL_MS);
  assert.ok(typeof first === "object" && "held" in first);
  assert.ok(typeof second === "object" && "held" in second);
  assert.equal(await submissions.settle("slow", second, outcome), true);
  // Before: settle kept (or released) whatever held the key.
  assert.equal(await submissions.settle("slow", first, { result: "first's" }), false);
  assert.equal(await submissions.settle("slow", first, undefined), false);
  assert.deepEqual(await submissions.read("slow"), outcome);
});

Deno.test("a first slower than its lease, whose repeat took the key and failed: its settle keeps its outcome, and a later post gets it (KV and memory)", async () => {
  await using store = await tempStore();
  const path = store.path;
  using kv = await Deno.openKv(path);
  const stores = { kv: submissionsInKv(kv), memory: submissionsInMemory() };
  for (const [name, submissions] of Object.entries(stores)) {
    const outcome = { result: `first's, ${name}` };
    const first = await submissions.claim("slow", 0);
    assert.ok(typeof first === "object" && "held" in first, name);
    // The lease of 0 lapses as the clock moves on (bounded: a clock tick).
    for (let tick = 0; tick < 100 && await submissions.read("slow") !== "gone"; tick++) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const repeat = await submissions.claim("slow", ONCE_TTL_MS);
    assert.ok(typeof repeat === "object" && "held" in repeat, name);
    assert.equal(await submissions.settle("slow", repeat, undefined), true, name); // it failed
    // Before: false, the first's outcome dropped, and the next post ran the action a second time.
    assert.equal(await submissions.settle("slow", first, outcome), true, name);
    assert.deepEqual(await submissions.claim("slow", ONCE_TTL_MS), outcome, name);
  }
});

Deno.test("a submission is the signed-in user's: another user's post with its key and content runs for them, and never answers with the first's outcome", async () => {
  using kv = await Deno.openKv(":memory:");
  const app = memoryApp(authFiles(), { kv });
  const [ada, bob] = [new TestClient(app), new TestClient(app)];
  await ada.signInAs(await storedUser(kv, "ada@example.com"));
  await bob.signInAs(await storedUser(kv, "bob@example.com"));
  // One key, one content: a page with its form's key seen by two users of one browser (a shared
  // computer, Back after signing out), or a key that leaked.
  const key = crypto.randomUUID();
  const whoAmI = async (client: TestClient) => {
    const res = await client.request(`/_action/${actionIds.whoAmI}`, {
      method: "POST",
      body: encodeCall([], key),
      headers: { Origin: client.origin, Accept: "application/json" },
    });
    assert.equal(res.status, 200);
    return decodeResult(await res.text());
  };
  assert.deepEqual(await whoAmI(ada), { email: "ada@example.com" });
  assert.deepEqual(await whoAmI(bob), { email: "bob@example.com" });
  // The same user's repeat is still the one submission, answered with its outcome.
  assert.deepEqual(await whoAmI(ada), { email: "ada@example.com" });
});
