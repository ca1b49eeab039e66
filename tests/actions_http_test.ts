import assert from "node:assert/strict";
import { decodeResult, encodeCall } from "../lib/actions/wire.ts";
import { actionIds, probeProject, SECRET } from "./helpers/action_probe.ts";
import { isErrorEvent, type ReceivedItem, startSentryReceiver } from "./helpers/sentry_receiver.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

const MB = 1024 * 1024;
const DIGEST = /^[0-9A-Z][0-9A-Z-]{8,}[0-9A-Z]$/;

/** What a browser sends with a POST from one of our pages. */
function fromPage(server: TestServer, page = "/probe"): Record<string, string> {
  return { Origin: server.origin, "Sec-Fetch-Site": "same-origin", Referer: server.origin + page };
}

/** A call as the island's stub makes it. */
function call(server: TestServer, id: string, args: unknown[], headers = fromPage(server)) {
  return server.fetch(`/_action/${id}`, {
    method: "POST",
    body: encodeCall(args),
    headers: { Accept: "application/json", ...headers },
  });
}

/** The actions that ran so far, in order. */
function ran(server: TestServer): string[] {
  return server.logs().flatMap((line) => typeof line.probe === "string" ? [line.probe] : []);
}

/** The form posting to action `id` on `path`, with the hidden fields the server rendered. */
async function renderedForm(server: TestServer, path: string, id: string): Promise<FormData> {
  const html = await (await server.fetch(path)).text();
  const forms = html.matchAll(/<form[^>]*action="\/_action\/([^"]+)"[^>]*>(.*?)<\/form>/gs);
  const form = [...forms].find(([, action]) => action === id);
  assert.ok(form, `no form for action ${id} on ${path}`);
  assert.match(form[0], /method="POST"/);
  assert.match(form[0], /encType="multipart\/form-data"/);
  const fields = new FormData();
  for (
    const [, name, value = ""] of form[2].matchAll(
      /<input type="hidden" name="([^"]+)"(?: value="([^"]*)")?/g,
    )
  ) {
    fields.append(name, value.replaceAll("&quot;", '"').replaceAll("&amp;", "&"));
  }
  return fields;
}

function post(server: TestServer, id: string, body: BodyInit, headers: HeadersInit) {
  return server.fetch(`/_action/${id}`, { method: "POST", body, headers });
}

/** `name=value` of the cookie a response sets. */
function cookieOf(res: Response): string {
  const [cookie] = res.headers.getSetCookie();
  assert.ok(cookie, "no Set-Cookie");
  return cookie.split(";")[0];
}

Deno.test("server actions over HTTP", async (t) => {
  await using copy = await probeProject();
  await using server = await startServer({}, { root: copy.root });
  const ids = await actionIds(copy);

  await t.step("ids say nothing about their files", () => {
    assert.deepEqual(
      Object.keys(ids).sort(),
      ["echo", "fail", "late", "remember", "sign", "toAbout", "upload", "whoAmI"],
    );
    for (const id of Object.values(ids)) {
      assert.match(id, /^[\w-]{20}$/);
      assert.doesNotMatch(id, /probe|guestbook|routes|actions/i);
    }
  });

  await t.step("a call resolves with the action's value, types intact", async () => {
    const res = await call(server, ids.echo, [new Date(0), new Map([["a", 2n ** 70n]]), undefined]);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.deepEqual(decodeResult(await res.text()), [
      new Date(0),
      new Map([["a", 2n ** 70n]]),
      undefined,
    ]);
  });

  await t.step("FormData arguments carry files; the framework's fields stay out", async () => {
    const form = new FormData();
    form.set("note", "hi");
    form.set("file", new File(["hello"], "hello.txt", { type: "text/plain" }));
    form.set("$ACTION_KEY", "k123");
    const res = await call(server, ids.upload, [form]);
    assert.equal(res.status, 200);
    assert.deepEqual(decodeResult(await res.text()), {
      fields: ["note", "file"],
      name: "hello.txt",
      text: "hello",
    });
  });

  await t.step("invalid input comes back as field errors, not a failure", async () => {
    const form = new FormData();
    form.set("name", "");
    form.set("message", "hi");
    const res = await call(server, ids.sign, [{ entries: [] }, form]);
    assert.equal(res.status, 200);
    const state = decodeResult(await res.text()) as { errors: Record<string, string[]> };
    assert.deepEqual(state.errors, {
      name: ["Please tell us your name."],
      message: ["Say a little more: 3 characters at least."],
    });
  });

  await t.step("a failing action answers 500 with the digest only", async () => {
    const res = await call(server, ids.fail, []);
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const text = await res.text();
    assert.ok(!text.includes(SECRET));
    const { digest } = JSON.parse(text);
    assert.match(digest, DIGEST);
    const line = await server.waitForLog((l) => l.digest === digest);
    assert.equal(line.level, "error");
    assert.equal(line.status, 500);
    assert.equal((line.error as { message: string }).message, SECRET);
  });

  await t.step("refused requests never reach an action and are never 500", async () => {
    const before = ran(server).length;
    const small = () => encodeCall([1]);
    const sendAs = (method: string) =>
      server.fetch(`/_action/${ids.echo}`, { method, body: small(), headers: fromPage(server) });
    const cases: [string, Promise<Response>, number][] = [
      ["GET", server.fetch(`/_action/${ids.echo}`), 405],
      ["PUT", sendAs("PUT"), 405],
      ["DELETE", sendAs("DELETE"), 405],
      [
        "JSON body",
        post(server, ids.echo, "[1]", { ...fromPage(server), "Content-Type": "application/json" }),
        415,
      ],
      [
        "cross-site",
        post(server, ids.echo, small(), {
          Origin: "http://evil.example",
          "Sec-Fetch-Site": "cross-site",
        }),
        403,
      ],
      [
        "cross-site, text/plain",
        post(server, ids.echo, "x=1", {
          Origin: "http://evil.example",
          "Sec-Fetch-Site": "cross-site",
          "Content-Type": "text/plain",
        }),
        403,
      ],
      [
        "no Origin, same-site",
        post(server, ids.echo, small(), { "Sec-Fetch-Site": "same-site" }),
        403,
      ],
      ["no Origin, no Sec-Fetch-Site", post(server, ids.echo, small(), {}), 403],
      ["unknown id", call(server, "A".repeat(20), [1]), 404],
      ["over 1 MB", call(server, ids.echo, ["x".repeat(MB)]), 413],
      [
        "args not devalue",
        post(server, ids.echo, fields({ $ACTION_ARGS: "{" }), fromPage(server)),
        400,
      ],
      [
        "args not a list",
        post(server, ids.echo, fields({ $ACTION_ARGS: "[1]" }), fromPage(server)),
        400,
      ],
      [
        "a file that is not there",
        post(
          server,
          ids.echo,
          fields({ $ACTION_ARGS: '[[1],["Blob",2],"$ACTION_FILE_0"]' }),
          fromPage(server),
        ),
        400,
      ],
      [
        "bound arguments not devalue",
        post(
          server,
          ids.late,
          fields({ $ACTION_REF_1: "", "$ACTION_1:bound": "[" }),
          fromPage(server),
        ),
        400,
      ],
      [
        "a broken multipart body",
        post(server, ids.echo, "garbage", {
          ...fromPage(server),
          "Content-Type": "multipart/form-data; boundary=x",
        }),
        400,
      ],
    ];
    for (const [what, response, status] of cases) {
      const res = await response;
      await res.body?.cancel();
      assert.equal(res.status, status, what);
      assert.equal(res.headers.get("cache-control"), "no-store", what);
      if (status === 405) assert.equal(res.headers.get("allow"), "POST", what);
    }
    assert.deepEqual(ran(server).slice(before), []);
  });

  await t.step("same-origin by Sec-Fetch-Site alone is enough", async () => {
    const res = await call(server, ids.echo, [1], { "Sec-Fetch-Site": "same-origin" });
    assert.equal(res.status, 200);
    assert.deepEqual(decodeResult(await res.text()), [1]);
  });

  await t.step("just under 1 MB is fine", async () => {
    const res = await call(server, ids.echo, ["x".repeat(MB - 1000)]);
    await res.body?.cancel();
    assert.equal(res.status, 200);
  });

  await t.step("a form posted without JavaScript lands back on its page (303)", async () => {
    const form = await renderedForm(server, "/probe", ids.late);
    form.set("note", "hello");
    const res = await post(server, ids.late, form, fromPage(server, "/probe?tab=2"));
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/probe?tab=2");
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal(ran(server).at(-1), "late");
  });

  await t.step("…and on the home page when Referer is not ours or missing", async () => {
    for (const referer of ["http://evil.example/probe", undefined]) {
      const headers = { Origin: server.origin, "Sec-Fetch-Site": "same-origin" };
      const res = await post(
        server,
        ids.late,
        fields({ note: "x" }),
        referer ? { ...headers, Referer: referer } : headers,
      );
      assert.equal(res.status, 303);
      assert.equal(res.headers.get("location"), "/");
    }
  });

  await t.step("an action that returns redirect() sends the browser there", async () => {
    const form = await renderedForm(server, "/probe", ids.toAbout);
    const res = await post(server, ids.toAbout, form, fromPage(server));
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/about");
    // Called from an island, the stub navigates.
    const called = await call(server, ids.toAbout, []);
    assert.equal(called.status, 200);
    assert.equal(called.headers.get("action-redirect"), "/about");
    await called.body?.cancel();
  });

  await t.step("validation errors come back to the form without JavaScript", async () => {
    const form = await renderedForm(server, "/guestbook", ids.sign);
    form.set("name", "");
    form.set("message", "hi");
    const res = await post(server, ids.sign, form, fromPage(server, "/guestbook"));
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/guestbook");
    assert.match(res.headers.get("set-cookie")!, /Path=\/; HttpOnly; SameSite=Lax/);
    const cookie = cookieOf(res);

    const page = await server.fetch("/guestbook", { headers: { Cookie: cookie } });
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("cache-control"), "no-store");
    assert.match(page.headers.get("set-cookie")!, /Max-Age=0/);
    const html = await page.text();
    assert.match(html, /<p id="name-error" class="field-error">Please tell us your name\.<\/p>/);
    assert.match(html, /<textarea name="message"[^>]*>hi<\/textarea>/);

    const again = await (await server.fetch("/guestbook")).text();
    assert.doesNotMatch(again, /Please tell us your name/);
    const forged = cookie.replace(/.$/, (c) => c === "A" ? "B" : "A");
    const tampered = await server.fetch("/guestbook", { headers: { Cookie: forged } });
    assert.equal(tampered.status, 200);
    assert.doesNotMatch(await tampered.text(), /Please tell us your name/);
  });

  await t.step("a valid signing without JavaScript shows on the page", async () => {
    const form = await renderedForm(server, "/guestbook", ids.sign);
    form.set("name", "Grace");
    form.set("message", "Signed with JavaScript off.");
    const res = await post(server, ids.sign, form, fromPage(server, "/guestbook"));
    assert.equal(res.status, 303);
    const page = await server.fetch("/guestbook", { headers: { Cookie: cookieOf(res) } });
    const html = await page.text();
    assert.match(html, /Thank you, <!-- -->Grace<!-- -->!/);
    assert.match(html, /<q>Signed with JavaScript off\.<\/q>/);
  });

  await t.step("a form action that throws ends on the failure screen", async () => {
    const res = await post(server, ids.fail, fields({}), fromPage(server));
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const html = await res.text();
    assert.match(html, /a server-side exception has occurred/);
    const [, digest] = html.match(/Digest: <code>([^<]+)<\/code>/)!;
    assert.match(digest, DIGEST);
    assert.equal((await server.waitForLog((l) => l.digest === digest)).method, "POST");
    assert.ok(!html.includes(SECRET));
  });

  await t.step("the call's span is named after the action, in the caller's trace", async () => {
    await using receiver = startSentryReceiver();
    await using traced = await startServer(
      { SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1" },
      { root: copy.root },
    );
    const traceId = "5b8efff798038103d269b633813fc60c";
    const res = await call(traced, ids.echo, [1], {
      ...fromPage(traced),
      "sentry-trace": `${traceId}-b7ad6b7169203331-1`,
      baggage: `sentry-trace_id=${traceId},sentry-sampled=true,sentry-sample_rate=1`,
    });
    await res.body?.cancel();
    const named = (name: string) => (item: ReceivedItem) =>
      item.type === "transaction" && item.payload.transaction === name;
    const { payload } = await receiver.waitFor(named("action echo"));
    assert.equal(payload.contexts.trace.trace_id, traceId);

    const failed = await call(traced, ids.fail, []);
    const { digest } = await failed.json();
    const event = await receiver.waitFor(isErrorEvent);
    assert.equal(event.payload.tags.digest, digest);
    await receiver.waitFor(named("action fail"));
  });

  await t.step("the body limit is configurable", async () => {
    await using small = await startServer({ ACTION_BODY_LIMIT: "4096" }, { root: copy.root });
    const over = await call(small, ids.echo, ["x".repeat(5000)]);
    await over.body?.cancel();
    assert.equal(over.status, 413);
    const under = await call(small, ids.echo, ["x".repeat(3000)]);
    await under.body?.cancel();
    assert.equal(under.status, 200);
  });
});

function fields(entries: Record<string, string>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(entries)) form.append(name, value);
  return form;
}
