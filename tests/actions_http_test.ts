/**
 * @module
 * The action endpoint, in-process, on an app of probe actions and the test app's wall held in
 * memory: calls and their results, files, field errors, failures with a digest, every refusal
 * (405, 415, 403, 410, 413, 400) with the action never run, forms posted without JavaScript (303
 * back to their page, redirects, form state in a signed cookie), and the body limit. Forms are
 * submitted and actions called with the test kit (`shell/testing`), as a product's tests do.
 */
import assert from "node:assert/strict";
import { decodeResult, encodeCall } from "../lib/shared/action_wire.ts";
import type { App } from "../lib/server.ts";
import { captureLogs, TestClient } from "shell/testing";
import { actionIdOf, memoryApp } from "./helpers/app.ts";
import {
  call,
  fromPage,
  ids,
  ORIGIN,
  post,
  probeFiles,
  ran,
  SECRET,
} from "./helpers/probe_app.tsx";

const MB = 1024 * 1024;
const DIGEST = /^[0-9A-Z][0-9A-Z-]{8,}[0-9A-Z]$/;

/** The page's form posting to action `id`, as rendered: a POST, multipart (file inputs work). */
async function assertFormFor(app: App, path: string, id: string): Promise<void> {
  const html = await (await app.request(path)).text();
  const form = [...html.matchAll(/<form[^>]*>/g)].find(([tag]) => tag.includes(`/_action/${id}"`));
  assert.ok(form, `no form for action ${id} on ${path}`);
  assert.match(form[0], /method="POST"/);
  assert.match(form[0], /encType="multipart\/form-data"/);
}

/** `name=value` of the cookie a response sets. */
function cookieOf(res: Response): string {
  const [cookie] = res.headers.getSetCookie();
  assert.ok(cookie, "no Set-Cookie");
  return cookie.split(";")[0];
}

function fields(entries: Record<string, string>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(entries)) form.append(name, value);
  return form;
}

Deno.test("server actions", async (t) => {
  using logs = captureLogs();
  const app = memoryApp(probeFiles);

  await t.step("a call resolves with the action's value, types intact", async () => {
    const res = await call(app, ids.echo, [new Date(0), new Map([["a", 2n ** 70n]]), undefined]);
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
    const res = await call(app, ids.upload, [form]);
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
    const res = await call(app, ids.post, [{}, form]);
    assert.equal(res.status, 200);
    const state = decodeResult(await res.text()) as { errors: Record<string, string[]> };
    assert.deepEqual(state.errors, {
      name: ["A name, please."],
      message: ["3 characters at least."],
    });
  });

  await t.step("a failing action answers 500 with the digest only", async () => {
    const res = await call(app, ids.fail, []);
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const text = await res.text();
    assert.ok(!text.includes(SECRET));
    const { digest } = JSON.parse(text);
    assert.match(digest, DIGEST);
    const line = logs.lines.find((l) => l.digest === digest);
    assert.ok(line, "the failure was logged");
    assert.equal(line.level, "error");
    assert.equal(line.status, 500);
    assert.equal(line.error.message, SECRET);
    // Which action failed, by its export's name (the path holds only its opaque id).
    assert.equal(line.route, null);
    assert.equal(line.action, "fail");
  });

  await t.step("refused requests never reach an action and are never 500", async () => {
    const before = ran(logs.lines).length;
    const small = () => encodeCall([1]);
    const sendAs = async (method: string) =>
      await app.request(`/_action/${ids.echo}`, { method, body: small(), headers: fromPage() });
    const cases: [string, Promise<Response>, number][] = [
      ["GET", Promise.resolve(app.request(`/_action/${ids.echo}`)), 405],
      ["PUT", sendAs("PUT"), 405],
      ["DELETE", sendAs("DELETE"), 405],
      [
        "JSON body",
        post(app, ids.echo, "[1]", { ...fromPage(), "Content-Type": "application/json" }),
        415,
      ],
      [
        "cross-site",
        post(app, ids.echo, small(), {
          Origin: "http://evil.example",
          "Sec-Fetch-Site": "cross-site",
        }),
        403,
      ],
      [
        "cross-site, text/plain",
        post(app, ids.echo, "x=1", {
          Origin: "http://evil.example",
          "Sec-Fetch-Site": "cross-site",
          "Content-Type": "text/plain",
        }),
        403,
      ],
      [
        "no Origin, same-site",
        post(app, ids.echo, small(), { "Sec-Fetch-Site": "same-site" }),
        403,
      ],
      ["no Origin, no Sec-Fetch-Site", post(app, ids.echo, small(), {}), 403],
      // A page older than the build: stale_client_test.tsx has the rest.
      ["unknown id", call(app, "A".repeat(20), [1]), 410],
      ["over 1 MB", call(app, ids.echo, ["x".repeat(MB)]), 413],
      ["args not devalue", post(app, ids.echo, fields({ $ACTION_ARGS: "{" }), fromPage()), 400],
      ["args not a list", post(app, ids.echo, fields({ $ACTION_ARGS: "[1]" }), fromPage()), 400],
      [
        "a file that is not there",
        post(
          app,
          ids.echo,
          fields({ $ACTION_ARGS: '[[1],["Blob",2],"$ACTION_FILE_0"]' }),
          fromPage(),
        ),
        400,
      ],
      [
        "bound arguments not devalue",
        post(app, ids.late, fields({ $ACTION_REF_1: "", "$ACTION_1:bound": "[" }), fromPage()),
        400,
      ],
      [
        "a broken multipart body",
        post(app, ids.echo, "garbage", {
          ...fromPage(),
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
    assert.deepEqual(ran(logs.lines).slice(before), []);
  });

  await t.step("same-origin by Sec-Fetch-Site alone is enough", async () => {
    const res = await call(app, ids.echo, [1], { "Sec-Fetch-Site": "same-origin" });
    assert.equal(res.status, 200);
    assert.deepEqual(decodeResult(await res.text()), [1]);
  });

  await t.step("just under 1 MB is fine", async () => {
    const res = await call(app, ids.echo, ["x".repeat(MB - 1000)]);
    await res.body?.cancel();
    assert.equal(res.status, 200);
  });

  await t.step("a form posted without JavaScript lands back on its page (303)", async () => {
    await assertFormFor(app, "/probe", ids.late);
    const client = new TestClient(app);
    const res = await client.submit("/probe?tab=2", { form: "#late", fields: { note: "hello" } });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/probe?tab=2");
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal(ran(logs.lines).at(-1), "late");
  });

  await t.step("…and on the home page when Referer is not ours or missing", async () => {
    for (const referer of ["http://evil.example/probe", undefined]) {
      const headers = { Origin: ORIGIN, "Sec-Fetch-Site": "same-origin" };
      const res = await post(
        app,
        ids.late,
        fields({ note: "x" }),
        referer ? { ...headers, Referer: referer } : headers,
      );
      assert.equal(res.status, 303);
      assert.equal(res.headers.get("location"), "/");
    }
  });

  await t.step("an action that returns redirect() sends the browser there", async () => {
    const res = await new TestClient(app).submit("/probe", { form: "#to-about" });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/about");
    // Called from an island, the stub navigates.
    const called = await call(app, ids.toAbout, []);
    assert.equal(called.status, 200);
    assert.equal(called.headers.get("action-redirect"), "/about");
    await called.body?.cancel();
  });

  await t.step("validation errors come back to the form without JavaScript", async () => {
    await assertFormFor(app, "/wall", ids.post);
    const client = new TestClient(app);
    const res = await client.submit("/wall", { fields: { name: "", message: "hi" } });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/wall");
    assert.match(res.headers.get("set-cookie")!, /Path=\/; HttpOnly; SameSite=Lax/);
    const cookie = cookieOf(res);

    const page = await client.get("/wall");
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("cache-control"), "no-store");
    assert.match(page.headers.get("set-cookie")!, /Max-Age=0/);
    const html = await page.text();
    assert.match(html, /<p id="name-error" class="field-error">A name, please\.<\/p>/);
    assert.match(html, /<textarea name="message"[^>]*>hi<\/textarea>/);

    const again = await (await client.get("/wall")).text();
    assert.doesNotMatch(again, /A name, please/);
    const forged = cookie.replace(/.$/, (c) => c === "A" ? "B" : "A");
    const tampered = await app.request("/wall", { headers: { Cookie: forged } });
    assert.equal(tampered.status, 200);
    assert.doesNotMatch(await tampered.text(), /A name, please/);
  });

  await t.step("a valid post without JavaScript shows on the page", async () => {
    const client = new TestClient(app);
    const fields = { name: "Grace", message: "Posted with JavaScript off." };
    const page = await client.submit("/wall", { fields, follow: true });
    const html = await page.text();
    assert.match(html, /Posted as <!-- -->Grace<!-- -->\./);
    assert.match(html, /<q>Posted with JavaScript off\.<\/q>/);
  });

  await t.step("a form action that throws ends on the failure screen", async () => {
    const res = await post(app, ids.fail, fields({}), fromPage());
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const html = await res.text();
    assert.match(html, /a server-side exception has occurred/);
    const [, digest] = html.match(/Digest: <code>([^<]+)<\/code>/)!;
    assert.match(digest, DIGEST);
    assert.equal(logs.lines.find((l) => l.digest === digest)?.method, "POST");
    assert.ok(!html.includes(SECRET));
  });

  await t.step("the body limit is configurable", async () => {
    const small = memoryApp(probeFiles, { actionBodyLimit: 4096 });
    const over = await call(small, ids.echo, ["x".repeat(5000)]);
    await over.body?.cancel();
    assert.equal(over.status, 413);
    const under = await call(small, ids.echo, ["x".repeat(3000)]);
    await under.body?.cancel();
    assert.equal(under.status, 200);
  });
});

Deno.test("a result devalue cannot send fails, naming the action and where the value is", async () => {
  using logs = captureLogs();
  class Point {
    x = 1;
  }
  const file = "routes/_bad/actions.ts";
  const app = memoryApp({
    routes: {},
    actions: {
      [file]: {
        giveFunction: () => Promise.resolve({ result: { foo: () => 1 } }),
        giveInstance: () => Promise.resolve([1, { at: new Point() }]),
      },
    },
  });
  const cases = [
    ["giveFunction", ".result.foo", /function/i],
    ["giveInstance", "[1].at", /non-POJO/i],
  ] as const;
  for (const [name, path, reason] of cases) {
    const res = await call(app, actionIdOf(file, name), []);
    assert.equal(res.status, 500, name);
    const { digest } = await res.json();
    const line = logs.lines.find((l) => l.digest === digest);
    assert.ok(line, `${name}: a failure, logged`);
    assert.equal(line.error.name, "TypeError");
    const message = `server action ${name} returned a value that cannot be sent to the browser: ` +
      `result${path} (`;
    assert.ok(line.error.message.startsWith(message), line.error.message);
    assert.match(line.error.message, reason);
  }
});
