/**
 * Issue 11, finding 13: hosts and origins. Behind a reverse proxy the public origin differs from
 * what the server sees; `APP_ORIGIN` names it. Then server actions accept exactly that `Origin`,
 * and a request for any other `Host` gets 400 — pages and actions — so DNS rebinding (`Host:
 * evil`, `Origin: http://evil`) reaches nothing. `ALLOWED_HOSTS` adds to the host list (a
 * health check on the direct address, say) without widening the origins. With neither set, the
 * request's own origin is the app's: fine for one host, open to DNS rebinding — which is why
 * docs/deploying.md asks production to set `APP_ORIGIN`.
 */
import assert from "node:assert/strict";
import { stringify } from "devalue";
import type { TestServer } from "../helpers/server.ts";
import { requestBytes, send } from "./raw_http.ts";
import { builtTarget, startTarget } from "./target.ts";

const FILES = {
  "routes/_findings/echo.ts": `"use server";
    export async function echo(...args: unknown[]) {
      return args.length;
    }
  `,
};

const PUBLIC = "https://app.example";

/** A request as a proxy would forward it, or as an attacker would send it: `Host` as given. */
function ask(server: TestServer, host: string, target: string, headers: [string, string][] = []) {
  return send(server.port, requestBytes(server.port, { target, host, headers }));
}

/** A call of the action from an island on `origin`, sent with `Host: host`. */
function call(server: TestServer, id: string, host: string, origin: string, referer?: string) {
  const body = new URLSearchParams({ $ACTION_ARGS: stringify([1, 2]) }).toString();
  return postAction(server, id, host, origin, referer, body);
}

/** The same action posted as a form (JavaScript off), which answers with a 303. */
function postForm(
  server: TestServer,
  id: string,
  host: string,
  origin: string,
  referer: string,
  body = "note=hello",
) {
  return postAction(server, id, host, origin, referer, body);
}

function postAction(
  server: TestServer,
  id: string,
  host: string,
  origin: string,
  referer: string | undefined,
  body: string,
) {
  const headers: [string, string][] = [
    ["Content-Type", "application/x-www-form-urlencoded"],
    ["Origin", origin],
  ];
  if (referer) headers.push(["Referer", referer]);
  return send(
    server.port,
    requestBytes(server.port, { method: "POST", target: `/_action/${id}`, host, headers, body }),
  );
}

Deno.test("finding 13: APP_ORIGIN behind a proxy", async (t) => {
  const built = await builtTarget(FILES);
  await using server = await startTarget({ APP_ORIGIN: PUBLIC }, { root: built.root });
  const { echo } = await built.actionIds();
  const direct = `127.0.0.1:${server.port}`;

  await t.step("Host: app.example, as the proxy forwards it: pages and actions work", async () => {
    const page = await ask(server, "app.example", "/");
    assert.equal(page.status, 200);
    const res = await call(server, echo, "app.example", PUBLIC);
    assert.equal(res.status, 200, res.body);
    assert.equal(res.body, "[2]", "the action ran with both arguments");
    const form = await postForm(server, echo, "app.example", PUBLIC, `${PUBLIC}/about?x=1`);
    assert.equal(form.status, 303);
    assert.equal(form.headers.get("location"), "/about?x=1");
  });

  await t.step("the form state of an HTTPS origin rides in a Secure cookie", async () => {
    // `$ACTION_KEY`: React's key for a form's `useActionState`, whose result is carried over.
    const body = "note=hello&%24ACTION_KEY=k1";
    const form = await postForm(server, echo, "app.example", PUBLIC, `${PUBLIC}/about`, body);
    assert.equal(form.status, 303);
    const cookie = form.headers.get("set-cookie") ?? "";
    assert.match(cookie, /^__Host-app-form-state=/, "a prefix no subdomain or http can set");
    assert.match(cookie, /; Secure\b/, "the proxy's TLS, not the server's plain HTTP, decides");
  });

  await t.step("an Origin other than APP_ORIGIN: 403", async () => {
    for (const origin of [`http://${direct}`, "http://app.example", "https://evil.example"]) {
      const res = await call(server, echo, "app.example", origin);
      assert.equal(res.status, 403, origin);
    }
  });

  await t.step("any other Host: 400, for pages and actions", async () => {
    for (const host of ["evil", "evil.example", direct, "app.example.evil.example"]) {
      assert.equal((await ask(server, host, "/")).status, 400, `GET / with Host: ${host}`);
      const res = await call(server, echo, host, `http://${host}`);
      assert.equal(res.status, 400, `action with Host: ${host}`);
    }
  });

  const ran = server.logs().filter((line) => line.level === "error");
  assert.deepEqual(ran, []);
});

Deno.test("finding 13: ALLOWED_HOSTS widens the hosts, not the origins", async () => {
  const built = await builtTarget(FILES);
  await using server = await startTarget(
    { APP_ORIGIN: PUBLIC, ALLOWED_HOSTS: `app.example,localhost` },
    { root: built.root },
  );
  const { echo } = await built.actionIds();
  assert.equal((await ask(server, "localhost", "/")).status, 200, "a listed host");
  assert.equal((await ask(server, "app.example", "/")).status, 200, "the listed origin's host");
  assert.equal((await ask(server, "evil", "/")).status, 400, "any other host");
  assert.equal((await call(server, echo, "localhost", "http://localhost")).status, 403);
  assert.equal((await call(server, echo, "localhost", PUBLIC)).status, 200);
});

Deno.test("finding 13: with no setting, the request's own origin is the app's", async () => {
  const built = await builtTarget(FILES);
  await using server = await startTarget({}, { root: built.root });
  const { echo } = await built.actionIds();
  const direct = `127.0.0.1:${server.port}`;
  assert.equal((await call(server, echo, direct, `http://${direct}`)).status, 200, "same origin");
  assert.equal((await call(server, echo, direct, "http://evil.example")).status, 403, "cross-site");
  // The risk of running without APP_ORIGIN: a rebound name is its own origin, and accepted.
  const rebound = await call(server, echo, "evil.example", "http://evil.example");
  assert.equal(rebound.status, 200, "DNS rebinding gets through when APP_ORIGIN is unset");
});
