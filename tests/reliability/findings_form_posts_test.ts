/**
 * Issue 11, findings 9–11: a form posted with JavaScript off, answered with a 303 back to the page
 * it came from (its `Referer`) and the action's result in a signed cookie for that page.
 * - 9: no `Referer` sends the browser off-site: `Location` is always a path of ours — exactly one
 *   `/`, then neither `/` nor `\` — and `/` when the `Referer` is not ours.
 * - 10: no header a client controls turns a finished action into a 500 (a `;` in the path made
 *   `setCookie` throw); the state still reaches the page.
 * - 11: the signed state applies once and not after its own expiry, whatever the browser does with
 *   the cookie: a replay is ignored, and so is a cookie signed with the build's secret whose signed
 *   expiry has passed.
 */
import assert from "node:assert/strict";
import { parse, stringify } from "devalue";
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { tempStore } from "../helpers/kv.ts";
import type { TestServer } from "../helpers/server.ts";
import { requestBytes, send } from "./raw_http.ts";
import { builtTarget, startTarget } from "./target.ts";

const FILES = {
  "routes/_findings/forms.ts": `"use server";
    export async function remember(_previous: unknown, form: FormData) {
      return { said: String(form.get("said") ?? "") };
    }
  `,
  "islands/Remember.tsx": `
    import { useActionState } from "react";
    import { remember } from "../routes/_findings/forms.ts";

    export default function Remember() {
      const [state, action] = useActionState(remember, { said: "nothing yet" });
      return (
        <form action={action}>
          <input name="said" />
          <button type="submit">Remember</button>
          <output id="said">{state.said}</output>
        </form>
      );
    }
  `,
  // Every path below /findings/ shows the form, odd characters included.
  "routes/findings/[...rest].tsx": `
    import Remember from "../../islands/Remember.tsx";
    export default function Page() {
      return <Remember />;
    }
  `,
};

const PAGE = "/findings/form";
const COOKIE = "app-form-state";

/** The form's action and its hidden fields, as the page renders them, plus `said`. */
async function renderedForm(server: TestServer, said: string) {
  const html = await (await server.fetch(PAGE)).text();
  const form = /<form[^>]*action="(\/_action\/[^"]+)"[^>]*>(.*?)<\/form>/s.exec(html);
  assert.ok(form, `a form posting to an action on ${PAGE}`);
  const fields = new URLSearchParams();
  for (
    const [, name, value = ""] of form[2].matchAll(
      /<input type="hidden" name="([^"]+)"(?: value="([^"]*)")?/g,
    )
  ) {
    fields.append(name, value.replaceAll("&quot;", '"').replaceAll("&amp;", "&"));
  }
  fields.set("said", said);
  return {
    action: form[1],
    /**
     * A new submission at each read, as a new render of the form makes: these findings post one
     * form many times, each as its own (a repeat of one submission gets the first's answer).
     */
    get body() {
      fields.set("$ACTION_ONCE", crypto.randomUUID());
      return fields.toString();
    },
  };
}

/** What the page shows as the form's state, for a GET of `path` carrying `cookie`. */
async function shown(server: TestServer, path: string, cookie?: string): Promise<string> {
  const res = await server.fetch(path, { headers: cookie ? { Cookie: cookie } : {} });
  const html = await res.text();
  assert.equal(res.status, 200, `GET ${path}`);
  const said = /<output id="said">([^<]*)<\/output>/.exec(html)?.[1];
  assert.ok(said !== undefined, `the form on ${path}`);
  return said;
}

/** `name=value` of the form-state cookie a response sets, if it sets one. */
function stateCookie(headers: Headers): string | undefined {
  const cookie = headers.getSetCookie().find((line) => line.startsWith(`${COOKIE}=`));
  return cookie?.split(";")[0];
}

/** A path of ours: one `/`, then neither `/` nor `\`, and it resolves on our origin. */
function assertOurPath(location: string | null, origin: string, what: string) {
  assert.ok(location, `${what}: a Location`);
  assert.match(location, /^\/(?![/\\])/, `${what}: Location ${location}`);
  assert.equal(new URL(location, origin).origin, origin, `${what}: Location ${location}`);
}

async function startFormServer() {
  const built = await builtTarget(FILES);
  // A file, so that the test can read the key the server keeps there (`secret`).
  const store = await tempStore();
  const kvPath = store.path;
  const server = await startTarget({ KV_PATH: kvPath }, { root: built.root });
  return {
    built,
    server,
    kvPath,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await store[Symbol.asyncDispose]();
    },
  };
}

Deno.test("finding 9: the 303 after a form post never leaves the site", async () => {
  await using app = await startFormServer();
  const { server } = app;
  const O = server.origin;
  const hostile = [
    `${O}/\\evil.example/x`,
    `${O}//evil.example/x`,
    `${O}///evil.example/x`,
    `${O}/\\/evil.example/x`,
    `${O}/%2F%2Fevil.example/x`,
    `${O}/%5C%5Cevil.example/x`,
    `${O}/%2e%2e//evil.example/x`,
    `${O}/..//evil.example/x`,
    `${O}/\t/evil.example/x`,
    `${O}\\\\evil.example\\x`,
    `${O}/?next=//evil.example`,
    `http://evil.example/x`,
    `http://evil.example${PAGE}`,
    `https://127.0.0.1:${server.port}//evil.example/x`,
    `http://evil.example@127.0.0.1:${server.port}//evil.example/x`,
    `http://127.0.0.1:${server.port}@evil.example/x`,
    `http://user:pass@127.0.0.1:${server.port}/\\evil.example`,
    "//evil.example/x",
    "/\\evil.example/x",
    "javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "not a url",
  ];
  const form = await renderedForm(server, "hello");
  const postWith = async (referer: string) => {
    const res = await server.fetch(form.action, {
      method: "POST",
      body: form.body,
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: O,
        Referer: referer,
      },
    });
    await res.body?.cancel();
    return res;
  };
  for (const referer of hostile) {
    const res = await postWith(referer);
    assert.equal(res.status, 303, `Referer ${referer}`);
    assertOurPath(res.headers.get("location"), O, `Referer ${referer}`);
  }
  // Not ours at all: the home page.
  for (const referer of ["http://evil.example/x", "javascript:alert(1)", "//evil.example/x"]) {
    const res = await postWith(referer);
    assert.equal(res.headers.get("location"), "/", `Referer ${referer}`);
  }
});

Deno.test("finding 10: no client header turns a finished form action into a 500", async () => {
  await using app = await startFormServer();
  const { server } = app;
  const O = server.origin;
  const form = await renderedForm(server, "hello");
  const post = (headers: [string, string][]) =>
    send(
      server.port,
      requestBytes(server.port, {
        method: "POST",
        target: form.action,
        headers: [["Content-Type", "application/x-www-form-urlencoded"], ...headers],
        body: form.body,
      }),
    );

  // Same-origin pages with characters a cookie attribute or a header cannot hold as they are.
  const pages = [
    "/findings/a;b",
    "/findings/a;Path=/;Domain=evil.example",
    "/findings/a,b",
    "/findings/a b",
    "/findings/a\"b'c",
    "/findings/caf%C3%A9", // as browsers send it
    "/findings/café", // raw UTF-8, which Deno reads as Latin-1
    "/findings/日本語",
    "/findings/%3B%2C%20",
    "/findings/a%00b",
    `${PAGE}?q=a;b,c d`,
    `${PAGE}?q=${"x".repeat(6000)}`,
    `/findings/${"y".repeat(6000)}`,
  ];
  for (const page of pages) {
    const res = await post([["Origin", O], ["Referer", O + page]]);
    const what = `Referer ${O}${page.slice(0, 60)}`;
    assert.equal(res.status, 303, what);
    const location = res.headers.get("location");
    assertOurPath(location, O, what);
    if (/^[\x20-\x7e]*$/.test(page)) {
      const { pathname, search } = new URL(O + page);
      assert.equal(location, pathname + search, `${what}: back to the page`);
    }
    const cookie = stateCookie(res.headers);
    if (page.length > 1000) continue; // too large for a cookie: no state, still no failure
    assert.ok(cookie, `${what}: the state is flashed`);
    assert.equal(await shown(server, location!, cookie), "hello", `${what}: the state is shown`);
  }

  // Other headers a client sends, odd or hostile: never a 5xx.
  const others: [string, [string, string][]][] = [
    ["a garbage state cookie", [["Cookie", `${COOKIE}=garbage`]]],
    ["a state cookie of dots", [["Cookie", `${COOKIE}=a.b.c`]]],
    ["semicolons in Cookie", [["Cookie", ";;; ;=;a=;=b"]]],
    ["a 32 KB cookie", [["Cookie", `big=${"z".repeat(32 * 1024)}`]]],
    ["a CR in Referer", [["Referer", `${O}/findings/a\rb`]]],
    ["a LF in Referer", [["Referer", `${O}/findings/a\nb`]]],
    ["a NUL in Referer", [["Referer", `${O}/findings/a\0b`]]],
    ["a 60 KB Referer", [["Referer", `${O}/findings/${"w".repeat(60 * 1024)}`]]],
    ["an empty Referer", [["Referer", ""]]],
    ["two Referers", [["Referer", `${O}/findings/a`], ["Referer", `${O}/findings/b;c`]]],
    ["odd X-Forwarded-*", [["X-Forwarded-Proto", "https;"], ["X-Forwarded-Host", "a;b"]]],
  ];
  for (const [what, headers] of others) {
    const res = await post([["Origin", O], ...headers]);
    assert.ok(res.status > 0 && res.status < 500, `${what}: status ${res.status}`);
    if (res.status === 303) assertOurPath(res.headers.get("location"), O, what);
  }

  const errors = server.logs().filter((line) => line.level === "error");
  assert.deepEqual(errors.slice(0, 3), [], "no failure was logged");
});

/** The form-state cookie's payload, decoded (what the server signed). */
function payloadOf(cookie: string): Record<string, unknown> {
  const value = decodeURIComponent(cookie.slice(COOKIE.length + 1));
  return parse(Buffer.from(value.split(".")[0], "base64url").toString());
}

/** A form-state cookie for `flash`, signed with `secret` as `lib/actions/form_state.ts` does. */
function forge(secret: string, flash: Record<string, unknown>): string {
  const payload = Buffer.from(stringify(flash)).toString("base64url");
  const signature = createHmac("sha256", secret).update(payload).digest("base64url");
  return `${COOKIE}=${payload}.${signature}`;
}

Deno.test("finding 11: the form state applies once, and never after its signed expiry", async () => {
  await using app = await startFormServer();
  const { server, built, kvPath } = app;
  const form = await renderedForm(server, "hello");
  const res = await server.fetch(form.action, {
    method: "POST",
    body: form.body,
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: server.origin,
      Referer: server.origin + PAGE,
    },
  });
  await res.body?.cancel();
  assert.equal(res.status, 303);
  const cookie = stateCookie(res.headers);
  assert.ok(cookie, "the state is flashed");

  assert.equal(await shown(server, PAGE, cookie), "hello", "applied the first time");
  assert.equal(await shown(server, PAGE, cookie), "nothing yet", "replayed: not applied again");
  assert.equal(await shown(server, PAGE, cookie), "nothing yet", "nor a third time");

  // Signed with the server's key, as the server would: the state as it came, a fresh id.
  const secret = await built.secret(kvPath);
  const { state } = payloadOf(cookie);
  const flash = (expires: number) => ({ path: PAGE, state, expires, id: crypto.randomUUID() });
  const fresh = forge(secret, flash(Date.now() + 60_000));
  assert.equal(await shown(server, PAGE, fresh), "hello", "a well-signed, unexpired state applies");
  const expired = forge(secret, flash(Date.now() - 1_000));
  assert.equal(await shown(server, PAGE, expired), "nothing yet", "an expired state is ignored");
  const unsigned = forge("not the secret", flash(Date.now() + 60_000));
  assert.equal(await shown(server, PAGE, unsigned), "nothing yet", "a bad signature is ignored");
});
