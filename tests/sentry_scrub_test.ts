/**
 * @module
 * No credentials in what Sentry receives: the scrubber on hand-made events (every place an event
 * carries names and URLs), then the app the entry points make, in-process, and `@sentry/deno`
 * against a receiver on 127.0.0.1, for a page that answers (its transaction) and one that fails
 * (its error event), with credentials in headers, cookies, the query and an outgoing fetch. No
 * envelope body holds a secret; what is not secret still arrives; `SENTRY_SCRUB_FIELDS` widens
 * what is secret.
 */
import assert from "node:assert/strict";
import type { Event, RequestEventData } from "@sentry/core";
import { flush } from "@sentry/deno";
import { appFromEnv } from "../lib/cli/app.ts";
import { readSettings } from "../lib/cli/settings.ts";
import { readSentryConfig } from "../lib/sentry/config.ts";
import { FILTERED, scrubber } from "../lib/sentry/scrub.ts";
import { captureLogs, isErrorEvent, isTransaction, startSentryReceiver } from "shell/testing";
import { memoryManifest } from "./helpers/app.ts";

/** Settings every app here gets: a KV store in memory, never the project's `.data/`. */
const IN_MEMORY: Record<string, string> = { KV_PATH: ":memory:" };

Deno.test("scrubber: request headers, cookies, query, URL and body", () => {
  const scrub = scrubber();
  const { request } = scrub({
    request: {
      url: "https://example.com/a?token=t&page=2#access_token=f&section=3",
      query_string: "?token=t&page=2&Pass%77ord=p",
      headers: {
        Authorization: "Bearer t",
        Cookie: "session=s; theme=dark",
        "Set-Cookie": "session=s",
        "Proxy-Authorization": "Basic p",
        "X-Api-Key": "k",
        "X-CSRF-Token": "c",
        Accept: "text/html",
        Referer: "https://example.com/b?jwt=j&q=1",
      },
      cookies: { session: "s", theme: "dark" },
      data: JSON.stringify({ user: { name: "ann", password: "p" }, secrets: ["x"] }),
    },
  });
  assert.deepEqual(request, {
    url: `https://example.com/a?token=${FILTERED}&page=2#access_token=${FILTERED}&section=3`,
    query_string: `?token=${FILTERED}&page=2&Pass%77ord=${FILTERED}`,
    headers: {
      Authorization: FILTERED,
      Cookie: FILTERED,
      "Set-Cookie": FILTERED,
      "Proxy-Authorization": FILTERED,
      "X-Api-Key": FILTERED,
      "X-CSRF-Token": FILTERED,
      Accept: "text/html",
      Referer: `https://example.com/b?jwt=${FILTERED}&q=1`,
    },
    // Every cookie's value, whatever its name: `theme` says nothing of what it holds.
    cookies: { session: FILTERED, theme: FILTERED },
    data: JSON.stringify({ user: { name: "ann", password: FILTERED }, secrets: FILTERED }),
  });

  const scrubbed = (request: RequestEventData) => scrub({ request }).request!;
  assert.deepEqual(scrubbed({ query_string: { api_key: "k", page: "2" } }).query_string, {
    api_key: FILTERED,
    page: "2",
  });
  assert.deepEqual(scrubbed({ query_string: [["sessionid", "s"], ["page", "2"]] }).query_string, [
    ["sessionid", FILTERED],
    ["page", "2"],
  ]);
  assert.equal(scrubbed({ data: "name=ann&passwd=p" }).data, `name=ann&passwd=${FILTERED}`);
  assert.deepEqual(scrubbed({ data: { csrf_token: "c", n: 1 } }).data, {
    csrf_token: FILTERED,
    n: 1,
  });
});

Deno.test("scrubber: spans, breadcrumbs, extra and contexts", () => {
  const event: Event = {
    type: "transaction",
    transaction: "GET /a",
    extra: { apiKey: "k", note: "kept", nested: { refresh_token: "r" } },
    contexts: {
      trace: {
        trace_id: "0af7651916cd43dd8448eb211c80319c",
        span_id: "b7ad6b7169203331",
        data: {
          "url.full": "http://h/a?token=t&page=2",
          "http.query": "?password=p&page=2",
          "url.query": "jwt=j&page=2",
          "http.request.header.cookie": "session=s",
          "http.request.header.accept": "text/html",
          "http.response.status_code": 200,
        },
      },
      auth: { user: "ann" },
    },
    breadcrumbs: [
      { category: "fetch", data: { method: "GET", url: "/api?token=t&page=2", status_code: 200 } },
      { category: "navigation", data: { from: "/a?secret=s", to: "/b" } },
    ],
    spans: [{
      span_id: "b7ad6b7169203332",
      trace_id: "0af7651916cd43dd8448eb211c80319c",
      start_timestamp: 1,
      description: "GET http://h/api?token=t&page=2",
      data: { url: "http://h/api?token=t&page=2", "http.fragment": "#id_token=i" },
    }],
  };
  const before = structuredClone(event);
  const scrubbed = scrubber()(event);
  assert.deepEqual(event, before, "the event itself (its scope's objects) is left alone");
  assert.deepEqual(scrubbed.extra, {
    apiKey: FILTERED,
    note: "kept",
    nested: { refresh_token: FILTERED },
  });
  assert.deepEqual(scrubbed.contexts?.trace?.data, {
    "url.full": `http://h/a?token=${FILTERED}&page=2`,
    "http.query": `?password=${FILTERED}&page=2`,
    "url.query": `jwt=${FILTERED}&page=2`,
    "http.request.header.cookie": FILTERED,
    "http.request.header.accept": "text/html",
    "http.response.status_code": 200,
  });
  assert.equal(scrubbed.contexts?.auth, FILTERED);
  assert.equal(scrubbed.contexts?.trace?.trace_id, "0af7651916cd43dd8448eb211c80319c");
  assert.deepEqual(scrubbed.breadcrumbs?.map((crumb) => crumb.data), [
    { method: "GET", url: `/api?token=${FILTERED}&page=2`, status_code: 200 },
    { from: `/a?secret=${FILTERED}`, to: "/b" },
  ]);
  const [span] = scrubbed.spans!;
  assert.equal(span.description, `GET http://h/api?token=${FILTERED}&page=2`);
  assert.deepEqual(span.data, {
    url: `http://h/api?token=${FILTERED}&page=2`,
    "http.fragment": `#id_token=${FILTERED}`,
  });
});

Deno.test("scrubber: values that are not plain data", () => {
  const error = new Error("kept as it is");
  const loop: Record<string, unknown> = { token: "t" };
  loop.self = loop;
  const { extra } = scrubber()({
    extra: { link: new URL("http://h/?token=t&page=2"), at: new Date(0), error, loop },
  });
  assert.equal(extra?.link, `http://h/?token=${FILTERED}&page=2`);
  assert.equal(extra?.at, "1970-01-01T00:00:00.000Z");
  assert.equal(extra?.error, error);
  assert.ok(!JSON.stringify(extra?.loop).includes(`"t"`), "a cycle ends, filtered");
});

Deno.test("scrubber: extra names widen what is secret", () => {
  const { request, extra } = scrubber(["Theme", " tenant "])({
    request: { headers: { theme: "dark", lang: "en" }, url: "http://h/?tenant_id=7&page=2" },
    extra: { tenant: "acme" },
  });
  assert.deepEqual(request?.headers, { theme: FILTERED, lang: "en" });
  assert.equal(request?.url, `http://h/?tenant_id=${FILTERED}&page=2`);
  assert.deepEqual(extra, { tenant: FILTERED });
});

Deno.test("SENTRY_SCRUB_FIELDS: comma-separated, none by default", () => {
  const read = (env: Record<string, string>) =>
    readSentryConfig((name) => env[name], false).config!;
  const dsn = "https://key@o1.ingest.example.io/42";
  assert.deepEqual(read({ SENTRY_DSN: dsn }).scrubFields, []);
  assert.deepEqual(read({ SENTRY_DSN: dsn, SENTRY_SCRUB_FIELDS: " tenant, ,email" }).scrubFields, [
    "tenant",
    "email",
  ]);
});

/** Values that must never reach Sentry, and the request that carries each of them. */
const SECRETS = ["abc.def", "s3cr3t", "k3y", "pr0xy", "t0k", "p4ss", "upk3y", "203.0.113.7"];
const QUERY = "?token=t0k&page=2&password=p4ss";
const HEADERS = {
  Authorization: "Bearer abc.def",
  Cookie: "session=s3cr3t; theme=dark",
  "X-Api-Key": "k3y",
  "Proxy-Authorization": "Basic pr0xy",
  "X-Forwarded-For": "203.0.113.7", // the user's IP: `sendDefaultPii` stays off
  Accept: "text/html, application/x-scrub-test",
};

Deno.test({
  name: "sentry (server): no credentials in any event or transaction",
  // The SDK keeps timers and connections of its own between tests: not leaks of the app's.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    using _logs = captureLogs();
    await using upstream = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response("ok"),
    );
    const manifest = memoryManifest({
      routes: {
        // A page that answers after fetching an upstream with a key in its URL: an `http.client`
        // span.
        "upstream.ts": {
          handler: {
            async GET() {
              const url = `http://127.0.0.1:${upstream.addr.port}/data?api_key=upk3y&v=1`;
              return new Response(await (await fetch(url)).text());
            },
          },
        },
        "fail/handler.ts": {
          handler: {
            GET() {
              throw new Error("handler: s3cret-f41lure");
            },
          },
        },
      },
    });

    /** Everything Sentry received for one page that answers and one that fails, raw and parsed. */
    const received = async (more: Record<string, string> = {}) => {
      await using receiver = startSentryReceiver();
      const env: Record<string, string> = {
        SENTRY_DSN: receiver.dsn,
        SENTRY_TRACES_SAMPLE_RATE: "1",
        ...more,
      };
      // Sentry started anew with these settings, as `main.ts` would.
      const { app } = await appFromEnv(
        manifest,
        readSettings((name) => (env[name] ?? IN_MEMORY[name])),
      );
      for (const [path, status] of [["/upstream", 200], ["/fail/handler", 500]] as const) {
        const res = await app.request(path + QUERY, { headers: HEADERS });
        assert.equal(res.status, status, path);
        await res.body?.cancel();
      }
      const event = await receiver.waitFor(isErrorEvent);
      const answered = await receiver.waitFor((i) =>
        isTransaction(i) && i.payload.transaction === "GET /upstream"
      );
      await receiver.waitFor((i) =>
        isTransaction(i) && i.payload.transaction === "GET /fail/handler"
      );
      await flush(5_000);
      return { bodies: receiver.bodies.join("\n"), event, answered };
    };

    await t.step("secrets are filtered, the rest arrives", async () => {
      const { bodies, event, answered } = await received();
      for (const secret of SECRETS) assert.ok(!bodies.includes(secret), `${secret} was sent`);

      for (const { payload } of [event, answered]) {
        const { request } = payload;
        assert.equal(request.headers.accept, HEADERS.Accept, "a plain header stays");
        assert.equal(request.headers.authorization, FILTERED);
        assert.equal(request.headers.cookie, FILTERED);
        // Names only: no cookie's value is ever known not to be a session.
        assert.deepEqual(request.cookies, { session: FILTERED, theme: FILTERED });
        assert.match(request.url, /\?token=\[Filtered\]&page=2&password=\[Filtered\]$/);
        assert.equal(payload.user?.ip_address, undefined);
      }
      const fetched = answered.payload.spans.find((s: { op: string }) => s.op === "http.client");
      assert.match(JSON.stringify(fetched), /api_key=\[Filtered\]&v=1/);
    });

    await t.step("SENTRY_SCRUB_FIELDS widens the list", async () => {
      const { bodies, event } = await received({ SENTRY_SCRUB_FIELDS: "theme, page" });
      for (const secret of [...SECRETS, "dark", "page=2"]) {
        assert.ok(!bodies.includes(secret), `${secret} was sent`);
      }
      assert.deepEqual(event.payload.request.cookies, { session: FILTERED, theme: FILTERED });
    });
  },
});
