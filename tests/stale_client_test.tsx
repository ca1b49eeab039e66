/**
 * @module
 * What the server answers a page older than its build, in-process: a call to an action the build
 * does not have — from an island's stub (410, `App-Stale: 1`, the JSON marker) or a form posted
 * without JavaScript (303 back to its page) — never a bare 404; what the form sent comes back to
 * its page, in its fields of the same names, with one sentence saying why, once; what is never
 * carried (passwords, the framework's fields, files), what happens past the cookie's size, and the
 * limits of any call still hold. Every page names its build, and so does every action response
 * and `GET /_build`. The form-state cookie is signed with a key kept in KV, so one app's cookie
 * verifies on another sharing the store — the next deploy.
 */
import assert from "node:assert/strict";
import { ActionError } from "shell/runtime";
import { captureLogs, TestClient } from "shell/testing";
import { kvSecret } from "../lib/kv/secret.ts";
import { type App, createApp } from "../lib/server.ts";
import { isKeepable, keptFromForm, STALE_NOTICE } from "../lib/shared/kept_input.ts";
import { type AppFiles, memoryApp, memoryManifest } from "./helpers/app.ts";
import { call, fromPage } from "./helpers/probe_app.tsx";
import { tempStore } from "./helpers/kv.ts";
import { FIXTURE_ROOT } from "./helpers/project_copy.ts";

/** An id no build of this app ever gave: what an old page's stub or form posts to after a deploy. */
const GONE = "GoneGoneGoneGoneGone";

/** A page with one field of each kind, none controlled, and one controlled field. */
function NotePage() {
  return (
    <>
      <title>Notes</title>
      <form method="post">
        <input name="title" />
        <textarea name="body" defaultValue="default text" />
        <input name="tag" />
        <input name="tag" />
        <input type="checkbox" name="pinned" value="yes" />
        <input type="radio" name="color" value="red" />
        <input type="radio" name="color" value="blue" />
        <select name="size" defaultValue="s">
          <option value="s">Small</option>
          <option value="l">Large</option>
        </select>
        <input type="password" name="pin" />
        <input type="hidden" name="draft" value="7" />
        <input name="controlled" value="as the component says" readOnly />
        <button type="submit">Save</button>
      </form>
    </>
  );
}

const files: AppFiles = {
  routes: { "notes.tsx": { default: NotePage }, "index.tsx": { default: () => <h1>Home</h1> } },
  actions: { "routes/_notes/actions.ts": { save: async () => await Promise.resolve("saved") } },
};

/** What the user typed, as the old page's form sends it (multipart, React's fields among them). */
function typed(): FormData {
  const form = new FormData();
  form.append("$ACTION_REF_1", "");
  form.append("$ACTION_KEY", "k1");
  form.append("title", "Groceries </script><script>alert(1)</script>");
  form.append("body", "Milk\nEggs");
  form.append("tag", "first");
  form.append("tag", "second");
  form.append("pinned", "yes");
  form.append("color", "blue");
  form.append("size", "l");
  form.append("password", "hunter2");
  form.append("draft", "999");
  form.append("controlled", "typed over");
  form.append("photo", new File(["jpeg"], "photo.jpg", { type: "image/jpeg" }));
  return form;
}

/** `name=value` of the cookie a response sets. */
function cookieOf(res: Response): string {
  const [cookie] = res.headers.getSetCookie();
  assert.ok(cookie, "no Set-Cookie");
  return cookie.split(";")[0];
}

async function page(app: App, path: string, cookie?: string): Promise<string> {
  const res = await app.request(path, { headers: cookie ? { Cookie: cookie } : {} });
  assert.equal(res.status, 200);
  return await res.text();
}

/** The value attribute (or text) each named field renders with. */
function shown(html: string) {
  const attr = (tag: string, name: string) => new RegExp(`${name}="([^"]*)"`).exec(tag)?.[1];
  const inputs = [...html.matchAll(/<input[^>]*>/g)].map(([tag]) => ({
    name: attr(tag, "name"),
    value: attr(tag, "value"),
    checked: /\schecked=""/.test(tag),
  }));
  const body = /<textarea[^>]*>([^<]*)<\/textarea>/.exec(html)?.[1];
  const size = /<option[^>]*selected=""[^>]*>/.exec(html)?.[0];
  return { inputs, body, size };
}

Deno.test("a call to an action the build does not have", async (t) => {
  using logs = captureLogs();
  const app = memoryApp(files);
  /** `form` posted with JavaScript off from /notes: the page it lands back on, told it is stale. */
  const postedToGone = async (form: FormData) => {
    const res = await app.request(`/_action/${GONE}`, {
      method: "POST",
      body: form,
      headers: fromPage("/notes"),
    });
    assert.equal(res.status, 303);
    assert.ok(cookieOf(res).length < 4000, "the form's values fit in one cookie");
    const html = await page(app, "/notes", cookieOf(res));
    assert.ok(html.includes(STALE_NOTICE));
    return html;
  };

  await t.step("from an island: 410, App-Stale and the marker, never 404", async () => {
    const res = await call(app, GONE, [{}, typed()], fromPage("/notes?list=3"));
    assert.equal(res.status, 410);
    assert.equal(res.headers.get("app-stale"), "1");
    assert.equal(res.headers.get("app-build"), "in-memory");
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.deepEqual(await res.json(), {
      error: {
        status: 410,
        message: "This page is out of date: reload it to get the new version.",
        stale: true,
      },
    });
    const line = logs.lines.find((l) => l.action === GONE);
    assert.equal(line?.level, "info");
    assert.equal(line?.from, "island");

    // The page it reloads to shows what was typed, once.
    const html = await page(app, "/notes?list=3", cookieOf(res));
    assert.ok(html.includes(STALE_NOTICE), "the sentence saying why");
    const { inputs, body, size } = shown(html);
    const value = (name: string) => inputs.filter((i) => i.name === name).map((i) => i.value);
    assert.deepEqual(value("title"), [
      "Groceries &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;",
    ]);
    assert.equal(body, "Milk\nEggs");
    assert.deepEqual(value("tag"), ["first", "second"], "the n-th field gets the n-th value");
    assert.ok(inputs.find((i) => i.name === "pinned")?.checked);
    assert.deepEqual(inputs.filter((i) => i.name === "color").map((i) => i.checked), [false, true]);
    assert.match(size!, /value="l"/);
    assert.deepEqual(value("pin"), [undefined], "a password field is never filled");
    assert.deepEqual(value("draft"), ["7"], "a hidden field keeps the page's own value");
    assert.deepEqual(value("controlled"), ["as the component says"]);
    assert.ok(!html.includes("hunter2"));
    assert.ok(!html.includes("<script>alert(1)"));

    const again = await page(app, "/notes?list=3", cookieOf(res));
    assert.ok(!again.includes(STALE_NOTICE), "applied once");
    assert.equal(shown(again).body, "default text");
  });

  await t.step("as an island's call rejects: an ActionError marked stale, 410", async () => {
    const error = await new TestClient(app).call(`/_action/${GONE}`, 1).catch((e) => e);
    assert.ok(error instanceof ActionError);
    assert.equal(error.status, 410);
    assert.equal(error.stale, true);
    assert.equal(error.message, "This page is out of date: reload it to get the new version.");
  });

  await t.step("a form without JavaScript: 303 back to its page, what it sent shown", async () => {
    const res = await app.request(`/_action/${GONE}`, {
      method: "POST",
      body: typed(),
      headers: fromPage("/notes?list=3"),
    });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/notes?list=3");
    assert.equal(res.headers.get("app-build"), "in-memory");
    const cookie = res.headers.getSetCookie()[0];
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Lax/i);
    assert.match(cookie, /Max-Age=60/);
    // Signed, not encrypted: what it must never hold, it does not.
    const payload = atob(
      cookieOf(res).split("=")[1].split(".")[0].replace(/-/g, "+").replace(/_/g, "/"),
    );
    assert.ok(!payload.includes("hunter2"), "no password");
    assert.ok(!payload.includes("$ACTION"), "no framework fields");
    assert.ok(!payload.includes("jpeg"), "no file");
    assert.equal(logs.lines.findLast((l) => l.action === GONE)?.from, "form");

    const html = await page(app, "/notes", cookieOf(res));
    assert.ok(html.includes(STALE_NOTICE));
    // A form's text travels with CRLF line ends, as browsers send it.
    assert.equal(shown(html).body, "Milk\r\nEggs");
  });

  await t.step("a Referer off-site lands on the home page", async () => {
    const res = await app.request(`/_action/${GONE}`, {
      method: "POST",
      body: typed(),
      headers: { ...fromPage(), Referer: "http://evil.example/notes" },
    });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/");
    assert.ok((await page(app, "/", cookieOf(res))).includes(STALE_NOTICE));
  });

  await t.step(
    "past the cookie's size, the longest values give way; the sentence stays",
    async () => {
      const form = new FormData();
      form.append("title", "kept");
      form.append("body", "x".repeat(20_000));
      const html = await postedToGone(form);
      assert.deepEqual(shown(html).inputs.find((i) => i.name === "title")?.value, "kept");
      assert.equal(shown(html).body, "", "too long to carry: emptied, not cut");
    },
  );

  await t.step(
    "nearly a mebibyte in hundreds of fields: a cookie within its size, the sentence",
    async () => {
      const form = new FormData();
      for (let i = 0; i < 450; i++) form.append(`field${i}`, "x".repeat(2_000));
      for (let i = 0; i < 100; i++) form.append(`${"n".repeat(99)}${i % 10}`, "y");
      form.append("title", "kept");
      await postedToGone(form);
    },
  );

  await t.step("the limits of any call still hold", async () => {
    const over = await call(app, GONE, ["x".repeat(2 * 1024 * 1024)]);
    assert.equal(over.status, 413);
    await over.body?.cancel();
    const bad = await app.request(`/_action/${GONE}`, {
      method: "POST",
      body: (() => {
        const form = new FormData();
        form.set("$ACTION_ARGS", "{");
        return form;
      })(),
      headers: { ...fromPage(), Accept: "application/json" },
    });
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
    const crossSite = await call(app, GONE, [1], {
      Origin: "http://evil.example",
      "Sec-Fetch-Site": "cross-site",
    });
    assert.equal(crossSite.status, 403);
    await crossSite.body?.cancel();
    const many = new FormData();
    for (let i = 0; i < 10_001; i++) many.append(`f${i}`, "");
    const tooMany = await app.request(`/_action/${GONE}`, {
      method: "POST",
      body: many,
      headers: fromPage(),
    });
    assert.equal(tooMany.status, 400);
    await tooMany.body?.cancel();
  });

  await t.step("a known action still runs, and its answer names the build", async () => {
    const id = memoryManifest(files).actions.entries[0].id;
    const res = await call(app, id, []);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("app-build"), "in-memory");
    await res.body?.cancel();
  });
});

Deno.test("a build without any action still answers an old page's call", async () => {
  const app = memoryApp({ routes: files.routes });
  const res = await call(app, GONE, [{}, typed()], fromPage("/notes"));
  assert.equal(res.status, 410);
  assert.ok((await page(app, "/notes", cookieOf(res))).includes(STALE_NOTICE));
});

Deno.test("every page names its build; GET /_build says which serves now", async () => {
  const app = memoryApp(files);
  assert.match(await page(app, "/notes"), /<meta name="app-build" content="in-memory"\/>/);
  const missing = await app.request("/no/such/page");
  assert.equal(missing.status, 404);
  assert.match(await missing.text(), /<meta name="app-build" content="in-memory"\/>/);
  const res = await app.request("/_build");
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "in-memory");
  assert.equal(res.headers.get("app-build"), "in-memory");
  assert.equal(res.headers.get("cache-control"), "no-store");
});

Deno.test("the form-state key is kept in KV: one build's cookie verifies on the next", async () => {
  using kv = await Deno.openKv(":memory:");
  const build = (secret: string) => {
    const manifest = memoryManifest(files);
    return createApp(
      { ...manifest, actions: { ...manifest.actions, secret } },
      { root: FIXTURE_ROOT, kv },
    );
  };
  const before = build("the first build's own key");
  const after = build("the next build's own key");
  const res = await call(before, GONE, [{}, typed()], fromPage("/notes"));
  assert.equal(res.status, 410);
  assert.ok((await page(after, "/notes", cookieOf(res))).includes(STALE_NOTICE));
  const [stored] = await Array.fromAsync(kv.list({ prefix: ["_app", "secret"] }));
  assert.equal(stored.key.at(-1), "form_state");
  assert.equal(typeof stored.value, "string");

  // Without a store, each build signs with its own key, and no other's cookie applies.
  const alone = (secret: string) => {
    const manifest = memoryManifest(files);
    return createApp(
      { ...manifest, actions: { ...manifest.actions, secret } },
      { root: FIXTURE_ROOT },
    );
  };
  const one = await call(alone("key one"), GONE, [{}, typed()], fromPage("/notes"));
  assert.ok(!(await page(alone("key two"), "/notes", cookieOf(one))).includes(STALE_NOTICE));
  assert.ok((await page(alone("key one"), "/notes", cookieOf(one))).includes(STALE_NOTICE));
});

Deno.test("many processes asking for the key at once agree on one", async () => {
  await using store = await tempStore();
  const path = store.path;
  const stores = await Promise.all(Array.from({ length: 6 }, () => Deno.openKv(path)));
  const keys = await Promise.all(stores.map((kv) => kvSecret(kv, "form_state")()));
  assert.equal(new Set(keys).size, 1);
  for (const kv of stores) kv.close();
});

/** A payment form: sensitive by name, by `autocomplete`, by the app's opt-out; and plain fields. */
function PayPage() {
  return (
    <form method="post">
      <input name="shipping_note" />
      <input name="pin" />
      <input name="iban" />
      <input name="card_cvc" />
      <input name="otp" />
      <input name="userPIN" />
      <input name="code" autoComplete="one-time-code" />
      <input name="card" autoComplete="cc-number" />
      <input name="new" type="text" autoComplete="new-password" />
      <input name="account" data-app-keep="off" />
      <input name="holder" defaultValue="as the server filled it" data-app-keep="off" />
    </form>
  );
}

Deno.test("a form posted without JavaScript to a removed action keeps no sensitive field in the cookie", async () => {
  const app = memoryApp({ routes: { "pay.tsx": { default: PayPage } } });
  const html = await page(app, "/pay");
  // As the browser sends the form: every field in order, the server's hidden marks among them.
  const form = new FormData();
  for (const [tag] of html.matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(tag)![1];
    const value = /value="([^"]*)"/.exec(tag)?.[1];
    form.append(name, /type="hidden"/.test(tag) ? value! : `typed-${name}`);
  }
  assert.deepEqual(form.getAll("$ACTION_UNKEPT"), ["code", "card", "new", "account", "holder"]);
  const res = await app.request(`/_action/${GONE}`, {
    method: "POST",
    body: form,
    headers: fromPage("/pay"),
  });
  assert.equal(res.status, 303);
  const payload = atob(
    cookieOf(res).split("=")[1].split(".")[0].replace(/-/g, "+").replace(/_/g, "/"),
  );
  assert.ok(payload.includes("typed-shipping_note"), `the plain field rides along: ${payload}`);
  assert.equal(payload.match(/typed-/g)?.length, 1, `nothing sensitive: ${payload}`);
  const back = shown(await page(app, "/pay", cookieOf(res))).inputs;
  assert.equal(back.find((i) => i.name === "shipping_note")?.value, "typed-shipping_note");
  assert.equal(back.find((i) => i.name === "holder")?.value, "as the server filled it");
});

Deno.test("which names are sensitive: words of the name, not letters inside a word", () => {
  for (const name of ["pin", "iban", "IBAN", "card_cvc", "cvv2", "otp", "userPIN", "newPassword"]) {
    assert.ok(!isKeepable(name), name);
  }
  for (const name of ["OTPCode", "CVVNumber", "userPINCode", "IBANField", "APIKey", "SSNValue"]) {
    assert.ok(!isKeepable(name), name);
  }
  for (const name of ["card[number]", "cardNumber", "api_key", "csrf_token", "security-code"]) {
    assert.ok(!isKeepable(name), name);
  }
  for (const name of ["shipping", "spinner", "footprint", "passenger", "title", "tokens_left"]) {
    assert.ok(isKeepable(name), name);
  }
});

Deno.test("a one-time code, a recovery code or a short password under the names products give them is never kept", () => {
  // Kept before: the HTML standard's own token as a name, and common names of such fields.
  const names = ["one-time-code", "oneTimeCode", "2fa_code", "verification_code", "new_pw"];
  for (const name of [...names, "recoveryCode", "backup_code", "authCode", "private_key"]) {
    assert.ok(!isKeepable(name), name);
  }
  for (const name of ["postcode", "zip_code", "coupon_code", "time", "one_line", "pwa_name"]) {
    assert.ok(isKeepable(name), name);
  }
  // Not kept before: "one time" alone was a code's word, and a donation's frequency was lost.
  for (const name of ["one_time_purchase", "oneTimeDonation", "onetime", "one-time-fee"]) {
    assert.ok(isKeepable(name), name);
  }
  for (const name of ["onetimecode", "one_time_password", "oneTimePin", "one-time-code-2"]) {
    assert.ok(!isKeepable(name), name);
  }
});

Deno.test("a client's marks cost a post to a removed action one pass, however many it sends", () => {
  const form = new FormData();
  for (let i = 0; i < 500; i++) form.append(`field${i}`, "typed");
  const names = Array.from({ length: 5_000 }, (_, i) => i === 0 ? "field0" : `mark${i}`);
  let reads = 0;
  const marks = new Proxy(names, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  const kept = keptFromForm(form, marks);
  assert.equal(kept.length, 499, "field0 was marked");
  assert.ok(reads <= names.length, `each mark read once, not once a field: ${reads} reads`);
});
