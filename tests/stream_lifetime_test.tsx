/**
 * @module
 * An event stream's bounded lifetime, over real HTTP, behind a guard (`requireUser()`, on the
 * tests' own app of `helpers/auth.tsx`): a stream opened before "Log out everywhere" ends within
 * its lifetime with an event `renew`, and the browser's next one is refused (401); one of a user
 * still signed in ends the same way and the next resumes from `Last-Event-ID`, nothing lost or
 * repeated; `lifetimeMs: 0` keeps a stream open. A source's own event of the reserved name is a
 * failure, never sent. (The page's side, with no visible drop, is in
 * tests/e2e/live_collection_test.ts.)
 */
import assert from "node:assert/strict";
import { eventStream, type ServerEvent } from "../lib/mod.ts";
import { sinceOf } from "../lib/kv/feed.ts";
import { captureLogs, TestClient } from "../lib/testing.ts";
import { memoryApp, serveApp } from "./helpers/app.ts";
import { actionIds, authFiles, callAction, storedUser } from "./helpers/auth.tsx";
import { eventStreamApp, readEvents } from "./helpers/events.ts";
import type { Handlers } from "../lib/mod.ts";

/** Short, so the tests see streams end; the bound on a wait for an end is many times it. */
const LIFETIME_MS = 300;
const ENDS_WITHIN_MS = 20_000;

/** A numbered event every 20 ms from where the client is (`Last-Event-ID`, `?since=`). */
function counting(lifetimeMs?: number): Handlers {
  return {
    GET: (req, ctx) =>
      eventStream(req, ctx, async function* (signal): AsyncGenerator<ServerEvent> {
        const from = sinceOf(req, ctx.url) ?? 0;
        for (let id = from + 1; id <= from + 10_000 && !signal.aborted; id++) {
          yield { id, event: "tick", data: String(id) };
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }, { lifetimeMs }),
  };
}

async function setup() {
  const kv = await Deno.openKv(":memory:");
  const files = authFiles();
  files.routes["account/events.ts"] = { handler: counting() };
  files.routes["account/forever.ts"] = { handler: counting(0) };
  const app = memoryApp(files, { kv, eventStreamLifetimeMs: LIFETIME_MS });
  const served = serveApp(app);
  // The same app in this process: its session, begun without a password, is good over HTTP too.
  const browser = new TestClient(app);
  await browser.signInAs(await storedUser(kv, "reader@example.com"));
  const cookie = `session=${await browser.cookie("session")}`;
  return {
    served,
    browser,
    cookie,
    async [Symbol.asyncDispose]() {
      await served[Symbol.asyncDispose]();
      kv.close();
    },
  };
}

/** The whole of a stream that must end: rejects if it has not after `ENDS_WITHIN_MS`. */
async function untilEnd(res: Response): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      res.body?.cancel().catch(() => {});
      reject(new Error(`the stream was still open after ${ENDS_WITHIN_MS} ms`));
    }, ENDS_WITHIN_MS);
  });
  try {
    return await Promise.race([res.text(), late]);
  } finally {
    clearTimeout(timer);
  }
}

const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));

Deno.test("a guarded stream opened before 'Log out everywhere' ends, and the next is refused", async () => {
  await using t = await setup();
  const res = await t.served.fetch("/account/events", { headers: { Cookie: t.cookie } });
  assert.equal(res.status, 200);
  const out = await callAction(t.browser, actionIds.logOutEverywhere, []);
  assert.deepEqual(out.answer, { ended: 1 });
  const text = await untilEnd(res);
  assert.match(text, /event: renew\ndata:\n\n$/, "its last event tells the browser to renew");
  const last = ids(text).at(-1) ?? 0;
  const again = await t.served.fetch("/account/events", {
    headers: { Cookie: t.cookie, "Last-Event-ID": String(last), Accept: "text/event-stream" },
  });
  assert.equal(again.status, 401, "the guard refuses the stream the browser opens next");
  await again.body?.cancel();
});

Deno.test("signed in still: the next stream resumes after the last id, nothing lost or repeated", async () => {
  await using t = await setup();
  const seen: number[] = [];
  let since: number | undefined;
  for (let stream = 0; stream < 3; stream++) {
    const headers: Record<string, string> = { Cookie: t.cookie };
    if (since !== undefined) headers["Last-Event-ID"] = String(since);
    const res = await t.served.fetch("/account/events", { headers });
    assert.equal(res.status, 200);
    const text = await untilEnd(res);
    assert.match(text, /event: renew\ndata:\n\n$/);
    seen.push(...ids(text));
    since = seen.at(-1);
  }
  assert.ok(seen.length >= 3, `${seen.length} events over three streams`);
  assert.deepEqual(seen, Array.from({ length: seen.length }, (_, i) => i + 1));
});

Deno.test("lifetimeMs: 0 keeps a stream open past the app's lifetime", async () => {
  await using t = await setup();
  await using forever = await readEvents(t.served.origin + "/account/forever", {
    Cookie: t.cookie,
  });
  const bounded = await t.served.fetch("/account/events", { headers: { Cookie: t.cookie } });
  // Side by side: once the bounded stream has ended, the other still delivers.
  assert.match(await untilEnd(bounded), /event: renew\ndata:\n\n$/);
  await forever.waitFor(forever.events.length + 2, ENDS_WITHIN_MS);
  assert.ok(!forever.events.some((event) => event.event === "renew"));
});

Deno.test("a source's own event named `renew` is refused: the stream ends as a failure, never sending it", async () => {
  // The hook opens the next stream at once on `renew`, with no backoff and no `since` moved: a
  // product event of that name ("a subscription renewed") sent first made every page reopen its
  // stream in a tight loop, each time taking it again from the same place.
  const app = eventStreamApp(async function* () {
    yield { id: 1, event: "renewed", data: "fine" };
    yield { id: 2, event: "renew", data: JSON.stringify({ plan: "pro" }) };
    yield { id: 3, event: "renewed", data: "never sent" };
  }, { lifetimeMs: 0 });
  try {
    using logs = captureLogs();
    const res = await app.request("/events");
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /event: renewed\ndata: fine\n/);
    assert.doesNotMatch(text, /event: renew\n/);
    assert.doesNotMatch(text, /never sent/);
    const [line, ...more] = logs.of(res).filter((line) => line.level === "error");
    assert.equal(more.length, 0);
    assert.match(String(line?.msg), /event type "renew" is reserved/);
  } finally {
    await app.close();
  }
});
