/**
 * Issue 22, findings 1, 3 and 11: what the server sends Sentry, and what Sentry can do to it. Real
 * server processes and the real `@sentry/deno`, against receivers on 127.0.0.1:
 *  - no cookie's value reaches Sentry — session cookies named any way (`sid`, `connect.sid`,
 *    `PHPSESSID`, `__Host-id`, the framework's `app-form-state`) — in events and transactions,
 *    with the SDK tracing and with Deno's OpenTelemetry;
 *  - an ingest that accepts connections and never answers holds the SDK's sends only until their
 *    timeout, and failures reach Sentry again once it answers;
 *  - a caller's `sentry-trace: …-1`, or a forged `sentry-sample_rand`, does not put every request
 *    of its into Sentry: past `SENTRY_TRACES_PARENT_LIMIT` a second, the rate decides.
 */
import assert from "node:assert/strict";
import { Arrivals } from "../../lib/testing/arrivals.ts";
import { otlpEnv, startOtlpReceiver } from "../helpers/otlp_receiver.ts";
import {
  isErrorEvent,
  isTransaction,
  type ReceivedItem,
  type SentryReceiver,
  startSentryReceiver,
} from "shell/testing";
import { builtTarget, startTarget } from "./target.ts";

const FILES = {
  "routes/findings/ok.ts": `export const handler = { GET: () => new Response("ok") };\n`,
  "routes/findings/forged.ts": `export const handler = { GET: () => new Response("ok") };\n`,
  // Each failure its own (`?n=`): the SDK drops an event identical to the one before it.
  "routes/findings/boom.ts": `export const handler = {
    GET(req: Request) {
      throw new Error(\`boom \${new URL(req.url).searchParams.get("n")}, on purpose\`);
    },
  };\n`,
};

/** Cookies that hold sessions, though only one of their names says so. */
const COOKIES: Record<string, string> = {
  sid: "s1d-v4lue-77a1",
  "connect.sid": "s%3Ac0nn3ct-v4lue-b2",
  PHPSESSID: "php5e55-v4lue-c3",
  "__Host-id": "h0st-1d-v4lue-d4",
  "app-form-state": "f0rm-5t4te-v4lue-e5",
  theme: "d4rk-th3me-f6",
};
const COOKIE_HEADER = Object.entries(COOKIES).map(([name, value]) => `${name}=${value}`)
  .join("; ");

function assertNoCookieValue(text: string, where: string) {
  for (const [name, value] of Object.entries(COOKIES)) {
    assert.ok(!text.includes(value), `the value of the cookie ${name} reached ${where}`);
  }
}

function assertCookiesFiltered(item: ReceivedItem) {
  const cookies = item.payload.request?.cookies ?? {};
  for (const [name, value] of Object.entries(cookies)) {
    assert.equal(value, "[Filtered]", `${item.type}: cookie ${name}`);
  }
}

Deno.test("finding 1: no cookie's value reaches Sentry, the SDK tracing", async () => {
  const built = await builtTarget(FILES);
  await using receiver = startSentryReceiver();
  const server = await startTarget(
    { SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1" },
    { root: built.root },
  );
  try {
    for (const path of ["/findings/ok", "/findings/boom"]) {
      const res = await server.fetch(path, { headers: { Cookie: COOKIE_HEADER } });
      await res.body?.cancel();
    }
    const event = await receiver.waitFor(isErrorEvent);
    const transaction = await receiver.waitFor((item) =>
      isTransaction(item) && item.payload.transaction === "GET /findings/ok"
    );
    assert.ok(event.payload.request, "the event carries its request");
    for (const item of [event, transaction]) assertCookiesFiltered(item);
  } finally {
    await server[Symbol.asyncDispose](); // SIGTERM flushes what the SDK still holds
  }
  assertNoCookieValue(receiver.bodies.join("\n"), "Sentry");
});

Deno.test("finding 1: no cookie's value reaches Sentry or OTLP, with Deno's OpenTelemetry", async () => {
  const built = await builtTarget(FILES);
  await using receiver = startSentryReceiver();
  await using otlp = startOtlpReceiver();
  const server = await startTarget(
    { ...otlpEnv(otlp), SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1" },
    { root: built.root },
  );
  try {
    const res = await server.fetch("/findings/boom", { headers: { Cookie: COOKIE_HEADER } });
    await res.body?.cancel();
    const event = await receiver.waitFor(isErrorEvent);
    assert.ok(event.payload.request, "the event carries its request");
    assertCookiesFiltered(event);
    await otlp.span((span) => span.attributes["url.path"] === "/findings/boom");
  } finally {
    await server[Symbol.asyncDispose]();
  }
  assertNoCookieValue(receiver.bodies.join("\n"), "Sentry");
  assertNoCookieValue(JSON.stringify([otlp.spans, otlp.logs]), "the OTLP receiver");
});

/**
 * Sentry's ingest, hung: while `hanging`, it takes connections, reads what comes and never answers
 * (`abandoned` counts those the client closed); after `answer()`, each new connection goes on to
 * `receiver`, which answers as Sentry does. TCP, so that a client giving up is seen for sure.
 */
function hangingIngest(receiver: SentryReceiver) {
  let hanging = true;
  let held = 0;
  let abandoned = 0;
  const arrivals = new Arrivals();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const hold = async (conn: Deno.Conn) => {
    held++;
    arrivals.arrived();
    const buffer = new Uint8Array(64 * 1024);
    try {
      while (await conn.read(buffer) !== null);
    } catch { /* reset */ }
    abandoned++;
    arrivals.arrived();
  };
  const pass = async (conn: Deno.Conn) => {
    const upstream = await Deno.connect({ hostname: "127.0.0.1", port: receiver.port });
    conns.add(upstream);
    await Promise.allSettled([
      conn.readable.pipeTo(upstream.writable),
      upstream.readable.pipeTo(conn.writable),
    ]);
  };
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        conns.add(conn);
        (hanging ? hold : pass)(conn).finally(() => conns.delete(conn));
      }
    } catch { /* closed */ }
  })();
  return {
    dsn: `http://publickey@127.0.0.1:${(listener.addr as Deno.NetAddr).port}/1`,
    held: () => held,
    abandoned: () => abandoned,
    until: (done: () => boolean, ms: number, what: string) =>
      arrivals.until(
        () => done() || undefined,
        ms,
        () => `${what}: held ${held}, given up ${abandoned}`,
      ),
    answer() {
      hanging = false;
    },
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
      await accepting;
    },
  };
}

function digestOnPage(html: string): string {
  const digest = /Digest: <code>([^<]+)<\/code>/.exec(html)?.[1];
  assert.ok(digest, `a digest on the failure screen: ${html.slice(0, 300)}`);
  return digest;
}

Deno.test("finding 3: after an ingest that hung, failures reach Sentry again", async () => {
  const built = await builtTarget(FILES);
  await using receiver = startSentryReceiver();
  await using ingest = hangingIngest(receiver);
  await using server = await startTarget(
    { SENTRY_DSN: ingest.dsn, SENTRY_TRACES_SAMPLE_RATE: "0" },
    { root: built.root },
  );
  let failures = 0;
  const fail = async () =>
    digestOnPage(await (await server.fetch(`/findings/boom?n=${failures++}`)).text());

  // More failures than the SDK keeps sends in flight (64): each hangs, the rest are dropped.
  for (let i = 0; i < 70; i++) await fail();
  await ingest.until(() => ingest.held() >= 64, 20_000, "the SDK's sends to a hung ingest");
  // Sends that never end are given up on, and their slots freed: nothing else can free them.
  await ingest.until(
    () => ingest.abandoned() >= ingest.held(),
    20_000,
    "the hung sends given up on",
  );

  ingest.answer();
  const later: string[] = [];
  for (let i = 0; i < 10; i++) later.push(await fail());
  for (const digest of later) {
    await receiver.waitFor((item) => isErrorEvent(item) && item.payload.tags?.digest === digest);
  }
});

Deno.test("finding 11: a caller cannot have all of its requests traced", async () => {
  const built = await builtTarget(FILES);
  await using receiver = startSentryReceiver();
  const server = await startTarget({
    SENTRY_DSN: receiver.dsn,
    SENTRY_TRACES_SAMPLE_RATE: "0.05",
    // One a second, so that however long the requests take, the followed ones stay few.
    SENTRY_TRACES_PARENT_LIMIT: "1",
  }, { root: built.root });
  const hex = (n: number) =>
    Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, "0"))
      .join("");
  const REQUESTS = 100;
  try {
    for (let i = 0; i < REQUESTS; i++) {
      // "Sampled", says the caller; and one that forges the random value the rate is compared with.
      const flagged = await server.fetch("/findings/ok", {
        headers: { "sentry-trace": `${hex(16)}-${hex(8)}-1` },
      });
      await flagged.body?.cancel();
      const forged = await server.fetch("/findings/forged", {
        headers: {
          "sentry-trace": `${hex(16)}-${hex(8)}`,
          baggage: `sentry-trace_id=${hex(16)},sentry-sample_rand=0.000001,sentry-sample_rate=1`,
        },
      });
      await forged.body?.cancel();
    }
  } finally {
    await server[Symbol.asyncDispose](); // SIGTERM flushes every transaction first
  }
  const traced = (name: string) =>
    receiver.items.filter((item) => isTransaction(item) && item.payload.transaction === name)
      .length;
  const flagged = traced("GET /findings/ok");
  const forged = traced("GET /findings/forged");
  // At 0.05, about 5 of 100 each; the flag adds at most one a second of the run.
  assert.ok(flagged >= 1, "a caller's decision is followed, within the limit");
  assert.ok(flagged <= 40, `${flagged} of ${REQUESTS} flagged requests traced`);
  assert.ok(forged <= 25, `${forged} of ${REQUESTS} requests with a forged sample_rand traced`);
});
