/**
 * @module
 * The test kit (`shell/testing`) does what a browser does, on an app in memory: the client's jar
 * keeps cookies by path and expiry and sends them back; redirects are followed only when asked
 * (303 as a GET, 307 with its method and body); a form is submitted with the entries a browser
 * builds — hidden and default values, the checked boxes only, the selected option, a textarea's
 * text, the clicked button, a button's own `formaction` — and the hidden fields React renders for a
 * bound server action; an action is called as an island calls it, its value, its `ActionError`
 * (`shell/runtime`'s: status, message, digest) or its redirect coming back; and a request's log lines are its own.
 */
import assert from "node:assert/strict";
import { ActionError } from "shell/runtime";
import { captureLogs, startSentryReceiver, TestClient } from "shell/testing";
import { httpError, redirect, requestContext } from "../lib/mod.ts";
import type { Middleware, RouteContext } from "../lib/mod.ts";
import { createUser } from "../lib/auth.ts";
import { memoryApp } from "./helpers/app.ts";

/** What a POST to `/echo` carried, as JSON: its entries and the headers a browser sets. */
async function echo(req: Request): Promise<Response> {
  const type = req.headers.get("content-type") ?? "";
  const form = await req.formData();
  const entries = [...form].map((
    [name, value],
  ) => [name, typeof value === "string" ? value : `file:${value.name}:${value.size}`]);
  return Response.json({
    entries,
    multipart: type.startsWith("multipart/form-data"),
    origin: req.headers.get("origin"),
    referer: req.headers.get("referer"),
    cookie: req.headers.get("cookie"),
  });
}

const FORM = `
  <input type="hidden" name="token" value="a&amp;b &quot;c&quot;">
  <input name="name" value="default">
  <input type="checkbox" name="agree" value="yes">
  <input type="checkbox" name="news" value="weekly" checked>
  <input type="text" name="off" value="x" disabled>
  <select name="size"><option value="s">S</option><option value="m" selected>M</option></select>
  <textarea name="note">one &amp; two &lt;three&gt;</textarea>
  <input type="file" name="upload">
  <button type="submit" name="go" value="save">Save</button>
  <button type="submit" name="go" value="drop" formaction="/echo?dropped=1">Drop</button>`;

/** What `remember` got, for the test to see what a form without JavaScript sent. */
const remembered: { bound: string; said: unknown }[] = [];

/** Binds its first argument on the server, as `useActionState` binds the previous state. */
async function remember(bound: string, form: FormData): Promise<void> {
  remembered.push({ bound, said: form.get("said") });
  return await Promise.resolve();
}

const ACTIONS = {
  remember,
  // deno-lint-ignore require-await -- every server action is async
  double: async (n: number, when: Date) => ({ twice: n * 2, year: when.getUTCFullYear() }),
  // deno-lint-ignore require-await
  whoAmI: async () => String(requestContext().get("user")),
  // deno-lint-ignore require-await
  fail: async (): Promise<never> => {
    throw new Error("the kit's test failure");
  },
  // deno-lint-ignore require-await
  away: async (): Promise<never> => redirect("/elsewhere"),
  // deno-lint-ignore require-await
  taken: async (): Promise<never> => {
    throw httpError(409, "That name is taken");
  },
};

const guard: Middleware = async (c, next) => {
  if (c.req.header("authorization") !== "Bearer ok") return c.text("Unauthorized", 401);
  c.set("user", "ada");
  await next();
};

let ticks = 0;

const app = memoryApp({
  routes: {
    "form.tsx": {
      default: () => (
        <form action="/echo" method="post" encType="multipart/form-data" id="full">
          <div dangerouslySetInnerHTML={{ __html: FORM }} />
        </form>
      ),
    },
    "tick.tsx": {
      // What the page shows changes with each load: a form posted from an earlier load sends
      // that load's value, as a tab left open does.
      default: () => (
        <form action="/echo" method="post" id="tick">
          <input type="hidden" name="seen" value={String(ticks++)} />
        </form>
      ),
    },
    "search.tsx": {
      default: () => (
        <form action="/echo-query" id="search">
          <input name="q" defaultValue="islands" />
        </form>
      ),
    },
    "bound.tsx": {
      default: () => (
        <form action={ACTIONS.remember.bind(null, "kept")}>
          <input name="said" />
          <button type="submit">Say</button>
        </form>
      ),
    },
    "two-forms.tsx": {
      default: () => (
        <>
          <form id="first" action="/echo" method="post" />
          <form action="/echo" method="post" />
        </>
      ),
    },
    "formless.tsx": { default: () => <p>Nothing to post here.</p> },
    "echo.ts": { handler: { POST: (req: Request) => echo(req) } },
    "echo-query.ts": {
      handler: { GET: (_req: Request, ctx: RouteContext) => Response.json(ctx.url.search) },
    },
    "cookies.ts": {
      handler: {
        GET: () =>
          new Response("set", {
            headers: [
              ["Set-Cookie", "theme=dark; Path=/; HttpOnly"],
              ["Set-Cookie", "scoped=1; Path=/admin"],
            ],
          }),
        DELETE: () =>
          new Response("gone", { headers: { "Set-Cookie": "theme=; Path=/; Max-Age=0" } }),
      },
    },
    "hop.ts": {
      handler: {
        GET: () => new Response(null, { status: 303, headers: { Location: "/landing" } }),
      },
    },
    "moved.ts": {
      handler: {
        GET: () => new Response(null, { status: 303, headers: { Location: "/form" } }),
      },
    },
    "landing.ts": {
      handler: {
        GET: (req: Request) => new Response(`landed, cookie: ${req.headers.get("cookie")}`),
      },
    },
    "keep.ts": {
      handler: {
        POST: () => new Response(null, { status: 307, headers: { Location: "/echo" } }),
      },
    },
    "guarded/_middleware.ts": { handler: guard },
    "broken.ts": {
      handler: {
        GET(_req: Request, ctx: RouteContext) {
          throw new Error(`broken on purpose, ${ctx.url.search}`);
        },
      },
    },
  },
  actions: {
    "routes/_kit/actions.ts": {
      remember: ACTIONS.remember,
      double: ACTIONS.double,
      fail: ACTIONS.fail,
      away: ACTIONS.away,
      taken: ACTIONS.taken,
    },
    "routes/guarded/actions.ts": { whoAmI: ACTIONS.whoAmI },
  },
});

Deno.test("the jar keeps cookies by path and expiry, and sends them back", async () => {
  const client = new TestClient(app);
  await (await client.get("/cookies")).body?.cancel();
  assert.equal(await client.cookie("theme"), "dark");
  assert.equal(await client.cookie("scoped"), undefined, "not sent outside its path");
  assert.equal(await client.cookie("scoped", "/admin/x"), "1");
  assert.equal(await (await client.get("/landing")).text(), "landed, cookie: theme=dark");
  await (await client.request("/cookies", { method: "DELETE" })).body?.cancel();
  assert.equal(await client.cookie("theme"), undefined, "Max-Age=0 removes it");
});

Deno.test("redirects are followed only when asked: 303 as a GET, 307 as it was", async () => {
  const client = new TestClient(app);
  const raw = await client.request("/hop");
  assert.equal(raw.status, 303);
  assert.equal(raw.headers.get("location"), "/landing");
  const followed = await client.request("/hop", { follow: true });
  assert.equal(followed.status, 200);
  assert.match(await followed.text(), /^landed/);
  assert.equal((await client.get("/hop")).status, 200, "get() follows, as an address bar does");

  const body = new FormData();
  body.set("kept", "yes");
  const kept = await client.request("/keep", { method: "POST", body, follow: true });
  assert.deepEqual((await kept.json()).entries, [["kept", "yes"]]);
});

Deno.test("an answer says where the redirects led, in-process as over HTTP", async () => {
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  const origin = `http://127.0.0.1:${server.addr.port}`;
  for (
    const [client, base] of [[new TestClient(app), "http://localhost"], [
      new TestClient(origin),
      origin,
    ]] as const
  ) {
    const followed = await client.get("/hop");
    await followed.body?.cancel();
    assert.equal(followed.url, `${base}/landing`, "a page's test asks where the user landed");
    assert.equal(followed.redirected, true);
    const direct = await client.get("/landing");
    await direct.body?.cancel();
    assert.equal(direct.url, `${base}/landing`);
    assert.equal(direct.redirected, false);
  }
});

Deno.test("an app made with its public origin is asked from it, cookies and sign-in too", async () => {
  // Before: from http://localhost whatever the app's origins, so an app made as production runs
  // it (APP_ORIGIN=https://...) answered every in-process request 400 "unknown host".
  using kv = await Deno.openKv(":memory:");
  const secure = memoryApp({
    routes: {
      "landing.ts": {
        handler: { GET: (req: Request) => new Response(`${new URL(req.url).origin}`) },
      },
      "cookies.ts": {
        handler: { GET: () => new Response("set", { headers: { "Set-Cookie": "theme=dark" } }) },
      },
    },
  }, { kv, origins: ["https://clinic.example/", "http://localhost"] });
  const client = new TestClient(secure);
  assert.equal(client.origin, "https://clinic.example");
  const landing = await client.get("/landing");
  assert.equal(landing.status, 200);
  assert.equal(await landing.text(), "https://clinic.example");
  await (await client.get("/cookies")).body?.cancel();
  assert.equal(await client.cookie("theme"), "dark", "the jar's cookies are the origin's");
  await client.signInAs(await createUser(kv, { email: "kim@example.com", password: "unused" }));
  assert.ok(await client.cookie("__Host-session"), "signed in over https, as that origin sets it");
  assert.equal(new TestClient(app).origin, "http://localhost", "without origins, as before");
});

Deno.test("a form goes with the entries a browser would send", async (t) => {
  const client = new TestClient(app);

  await t.step(
    "defaults, checked boxes, the selected option, text, files, the button",
    async () => {
      const res = await client.submit("/form", { fields: { name: "Ada" } });
      const sent = await res.json();
      assert.deepEqual(sent.entries, [
        ["token", 'a&b "c"'],
        ["name", "Ada"],
        ["news", "weekly"],
        ["size", "m"],
        ["note", "one & two <three>"],
        ["upload", "file::0"],
        ["go", "save"],
      ]);
      assert.equal(sent.multipart, true);
      assert.equal(sent.origin, "http://localhost");
      assert.equal(sent.referer, "http://localhost/form");
    },
  );

  await t.step("another button: its value and its own formaction", async () => {
    const res = await client.submit("/form", { button: "button[value=drop]" });
    const sent = await res.json();
    assert.deepEqual(sent.entries.at(-1), ["go", "drop"]);
  });

  await t.step("a GET form navigates with its fields in the query", async () => {
    const res = await client.submit("/search", { fields: { q: "deno & react" }, follow: true });
    assert.equal(await res.json(), "?q=deno+%26+react");
  });

  await t.step("a missing form or button is an error that says so", async () => {
    await assert.rejects(
      client.submit("/form", { form: "#nope" }),
      /no form #nope on http:\/\/localhost\/form; its forms: #full$/,
    );
    await assert.rejects(client.submit("/form", { button: "#nope" }), /no #nope in the form/);
  });

  await t.step("a page of several forms, or none, is an error that says what to do", async () => {
    await assert.rejects(
      client.submit("/two-forms"),
      /^Error: http:\/\/localhost\/two-forms has 2 forms: say which with `form` \(a CSS selector, or the server action it posts to\); its forms: #first, action=\/echo$/,
    );
    await assert.rejects(
      client.submit("/formless"),
      /^Error: no form on http:\/\/localhost\/formless: the page has none$/,
    );
  });

  await t.step("a page loaded earlier: its form as it was, not loaded again", async () => {
    const open = await client.load("/tick");
    assert.equal(open.url, "http://localhost/tick");
    const later = await client.submit("/tick");
    assert.deepEqual((await later.json()).entries, [["seen", "1"]]);
    const stale = await client.submit(open);
    const sent = await stale.json();
    assert.deepEqual(sent.entries, [["seen", "0"]], "the tab's own fields");
    assert.equal(sent.referer, "http://localhost/tick");
    await assert.rejects(
      client.load("/no/such/page"),
      /^Error: GET \/no\/such\/page answered 404$/,
    );
  });

  await t.step("a page reached through a redirect is the one the form is on", async () => {
    // As a browser: the Referer is the page landed on (a guarded page's `/login?next=…`), and an
    // error names it, not the URL asked for.
    const res = await client.submit("/moved", { fields: { name: "Ada" } });
    assert.equal((await res.json()).referer, "http://localhost/form");
    await assert.rejects(
      client.submit("/moved", { form: "#nope" }),
      /no form #nope on http:\/\/localhost\/form;/,
    );
  });
});

Deno.test("React's hidden fields go with the form: a bound argument reaches the action", async () => {
  using logs = captureLogs();
  const client = new TestClient(app);
  // The bound argument travels in a hidden field React renders: it arrives only if the kit sent it.
  const res = await client.submit("/bound", { form: ACTIONS.remember, fields: { said: "hi" } });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/bound");
  assert.deepEqual(logs.lines.filter((line) => line.level === "error"), []);
  assert.deepEqual(remembered.at(-1), { bound: "kept", said: "hi" });
  await client.call(ACTIONS.remember, "direct", formOf({ said: "yo" }));
  assert.deepEqual(remembered.at(-1), { bound: "direct", said: "yo" });
});

Deno.test("a call sent again with its submission key, as the stub retries: the action runs once", async () => {
  const client = new TestClient(app);
  const said = () => remembered.filter((each) => each.said === "retried").length;
  const retry = () =>
    client.callWith(ACTIONS.remember, ["retry", formOf({ said: "retried" })], {
      submission: "island-retry-0001",
    });
  await Promise.all([retry(), retry()]);
  await retry();
  assert.equal(said(), 1, "one submission, sent three times");
  await client.call(ACTIONS.remember, "retry", formOf({ said: "retried" }));
  assert.equal(said(), 2, "a new click is a new submission");
});

Deno.test("callWith types its arguments and its answer from the action, as call does", async () => {
  const client = new TestClient(app);
  // Before, its arguments were anything, and its answer whatever type the test declared, unchecked.
  const value: { twice: number; year: number } = await client.callWith(ACTIONS.double, [
    4,
    new Date("2026-01-02"),
  ], { headers: {} });
  assert.deepEqual(value, { twice: 8, year: 2026 });
  // @ts-expect-error -- a string where the action takes a number
  await client.callWith(ACTIONS.double, ["4", new Date()]).catch(() => {});
});

Deno.test("an action called as an island calls it: value, ActionError or redirect", async (t) => {
  using logs = captureLogs();
  const client = new TestClient(app);

  await t.step("the value, its types intact", async () => {
    const value = await client.call(ACTIONS.double, 21, new Date("2026-03-04"));
    assert.deepEqual(value, { twice: 42, year: 2026 });
  });

  await t.step("a refusal by the folder's middleware: ActionError with its status", async () => {
    const refused = await client.call(ACTIONS.whoAmI).catch((error) => error);
    assert.ok(refused instanceof ActionError, String(refused));
    assert.equal(refused.status, 401);
    const me = await client.callWith(ACTIONS.whoAmI, [], {
      headers: { Authorization: "Bearer ok" },
    });
    assert.equal(me, "ada");
  });

  await t.step(
    "an expected error: ActionError with its status and message, no digest",
    async () => {
      const taken = await client.call(ACTIONS.taken).catch((error) => error);
      assert.ok(taken instanceof ActionError, String(taken));
      assert.equal(taken.status, 409);
      assert.equal(taken.message, "That name is taken");
      assert.equal(taken.digest, undefined);
      assert.equal(taken.action, "taken");
    },
  );

  await t.step("a failure: ActionError 500 with the digest of its log line", async () => {
    const failed = await client.call(ACTIONS.fail).catch((error) => error);
    assert.ok(failed instanceof ActionError, String(failed));
    assert.equal(failed.status, 500);
    assert.ok(failed.digest);
    const line = logs.lines.find((l) => l.digest === failed.digest);
    assert.equal(line?.error.message, "the kit's test failure");
  });

  await t.step("a redirect: the error redirect() throws, with its location", async () => {
    await assert.rejects(client.call(ACTIONS.away), { location: "/elsewhere" });
  });

  await t.step(
    "a function no app registered is an error that says so, and what to do",
    async () => {
      const stray = async () => await Promise.resolve(1);
      await assert.rejects(client.call(stray), /is not a server action of an app made/);
      // adopt9 added an action to a module the last build had seen: no new file, so no warning
      // that the build is older; the error must name the build.
      await assert.rejects(
        client.call(stray),
        /An export added to a "use server" module since then is not in it: run deno task build/,
      );
      // A test of a server in another process meets it first: it names both ways out. adopt14's
      // product had a required setting (its inventory API's URL): the createApp the message
      // showed threw SettingsError, so it names the settings too.
      await assert.rejects(
        client.call(stray),
        /createApp\(manifest, \{ root, kv, settings \}\), never served, settings holding a value for each required setting/,
      );
      await assert.rejects(
        client.call(stray),
        /the URL the page's form posts to \(\/_action\/\.\.\.\)/,
      );
    },
  );
});

Deno.test("a request's log lines are its own", async () => {
  using logs = captureLogs();
  const client = new TestClient(app);
  const first = await client.get("/broken?first");
  const second = await client.get("/broken?second");
  const [firstPage, secondPage] = [await first.text(), await second.text()];
  assert.equal(logs.lines.length, 2);
  const [line] = logs.of(second);
  assert.deepEqual(logs.of(second), [line]);
  assert.ok(secondPage.includes(line.digest), "the page shows its own line's digest");
  assert.ok(!firstPage.includes(line.digest));
  assert.notDeepEqual(logs.of(first), logs.of(second));
});

Deno.test("the Sentry receiver answers the OTLP exports of `deno task start`, apart from envelopes", async () => {
  await using receiver = startSentryReceiver();
  const base = `http://127.0.0.1:${receiver.port}/api/1/integration/otlp/v1`;
  for (const signal of ["traces", "logs"]) {
    const res = await fetch(`${base}/${signal}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-protobuf" },
      body: new Uint8Array([0x0a, 0x02, 0x08, 0x01]),
    });
    await res.body?.cancel();
    assert.equal(res.status, 200);
  }
  assert.deepEqual(receiver.requests.map((r) => r.path), [
    "/api/1/integration/otlp/v1/traces",
    "/api/1/integration/otlp/v1/logs",
  ]);
  assert.equal(receiver.envelopes(), 0);
  assert.deepEqual(receiver.items, []);
});

function formOf(fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  return form;
}
