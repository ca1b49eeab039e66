/**
 * @module
 * `_middleware.ts` with Hono's own middleware, as it is, on a project copy built and started for
 * real (the chains come from the build's manifest): `hono/basic-auth` guarding a folder's page and
 * the server actions whose module sits in it — refused with 401 unauthenticated, called as an
 * island does and posted as a form without JavaScript, the action never running; authenticated,
 * it runs, sees through `requestContext()` what the middleware set and sets a cookie on its
 * response. A `"use server"` module under `lib/` gets only the root chain, and the chain is the
 * action's own, whatever else the request names. `hono/cors` answers a preflight; `hono/jwt`
 * refuses a request without a token and hands a valid one's payload to the page's `state`.
 */
import assert from "node:assert/strict";
import { sign } from "hono/jwt";
import { decodeResult, encodeCall } from "../../lib/shared/action_wire.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { actionIds } from "../helpers/fixtures.ts";
import { startServer } from "../helpers/server.ts";

const JWT_SECRET = "a-test-secret-of-no-value";

const FILES: Record<string, string> = {
  // The root folder's chain: it marks every request it runs for.
  "routes/_middleware.ts": `import type { Middleware } from "../lib/mod.ts";
export const handler: Middleware = async (c, next) => {
  c.set("root", true);
  await next();
  c.res.headers.set("X-Root-Chain", "ran");
};
`,
  "routes/secret/_middleware.ts": `import { basicAuth } from "hono/basic-auth";
export const handler = basicAuth({
  verifyUser(username, password, c) {
    const ok = username === "ann" && password === "pw";
    if (ok) c.set("user", username);
    return ok;
  },
});
`,
  "routes/secret/index.tsx": `import type { PageProps } from "../../lib/mod.ts";
export default function Secret({ state }: PageProps) {
  return <p id="user">{String(state.user)}</p>;
}
`,
  // Actions behind the folder's basic auth; each logs that it ran, and who it ran for.
  "routes/secret/_actions.ts": `"use server";
import { setCookie } from "hono/cookie";
import { requestContext } from "../../lib/mod.ts";

export async function remember(_form?: FormData) {
  const c = requestContext();
  console.log(JSON.stringify({ probe: "remember", user: c.get("user") ?? null }));
  setCookie(c, "flavor", "mint", { path: "/" });
  return { user: c.get("user") ?? null, root: c.get("root") ?? null };
}
`,
  // Under lib/: the root's chain only.
  "lib/open_actions.ts": `"use server";
import { requestContext } from "./mod.ts";

export async function openDoor(_form?: FormData) {
  const c = requestContext();
  console.log(JSON.stringify({ probe: "openDoor", user: c.get("user") ?? null }));
  return { user: c.get("user") ?? null, root: c.get("root") ?? null };
}
`,
  "routes/cors/_middleware.ts": `import { cors } from "hono/cors";
export const handler = cors({ origin: "https://app.example", allowMethods: ["GET", "POST"] });
`,
  "routes/cors/data.ts": `export const handler = {
  GET: () => Response.json({ shared: true }),
  POST: () => Response.json({ posted: true }),
};
`,
  "routes/jwt/_middleware.ts": `import { jwt } from "hono/jwt";
export const handler = jwt({ secret: "${JWT_SECRET}", alg: "HS256" });
`,
  "routes/jwt/index.tsx": `import type { PageProps } from "../../lib/mod.ts";
export default function Claims({ state }: PageProps) {
  const payload = state.jwtPayload as { sub: string };
  return <p id="sub">{payload.sub}</p>;
}
`,
};

const ANN = `Basic ${btoa("ann:pw")}`;

Deno.test("Hono's middleware in _middleware.ts, for pages and server actions", async (t) => {
  const root = await builtCopy("middleware", FILES);
  await using server = await startServer({}, { root });
  const ids = await actionIds(root);
  const origin = { Origin: server.origin };

  const stubCall = (id: string, headers: Record<string, string> = {}) =>
    server.fetch(`/_action/${id}`, {
      method: "POST",
      body: encodeCall([]),
      headers: { ...origin, ...headers },
    });
  const formPost = (id: string, fields: Record<string, string>, headers = {}) => {
    const body = new FormData();
    for (const [name, value] of Object.entries(fields)) body.set(name, value);
    return server.fetch(`/_action/${id}`, {
      method: "POST",
      body,
      headers: { ...origin, ...headers },
    });
  };
  /**
   * Every line the actions logged, once a call made now (to an action that runs) has logged its
   * own: a run of a request sent before it would have logged first.
   */
  const ranUntilNow = async () => {
    const doors = () => server.logs().filter((line) => line.probe === "openDoor").length;
    const before = doors();
    const marker = await stubCall(ids.openDoor);
    await marker.body?.cancel();
    await server.waitForLog(() => doors() > before);
    return server.logs().filter((line) => "probe" in line);
  };
  const ranRemember = async () => (await ranUntilNow()).filter((line) => line.probe === "remember");

  await t.step(
    "the folder's page: 401 without credentials, the user's name with them",
    async () => {
      const refused = await server.fetch("/secret");
      await refused.body?.cancel();
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get("www-authenticate") ?? "", /^Basic/);
      const page = await server.fetch("/secret", { headers: { Authorization: ANN } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<p id="user">ann<\/p>/);
    },
  );

  await t.step(
    "unauthenticated, an island's call and a form post get 401; the action never runs",
    async () => {
      const call = await stubCall(ids.remember);
      assert.equal(call.status, 401);
      assert.equal(call.headers.get("set-cookie"), null);
      await call.body?.cancel();
      const form = await formPost(ids.remember, { note: "x" });
      assert.equal(form.status, 401);
      await form.body?.cancel();
      const wrong = await stubCall(ids.remember, { Authorization: `Basic ${btoa("ann:wrong")}` });
      assert.equal(wrong.status, 401);
      await wrong.body?.cancel();
      assert.deepEqual(await ranRemember(), []);
    },
  );

  await t.step(
    "authenticated, a call runs, sees what the middleware set, sets a cookie",
    async () => {
      const res = await stubCall(ids.remember, { Authorization: ANN });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("set-cookie") ?? "", /^flavor=mint; Path=\//);
      assert.deepEqual(decodeResult(await res.text()), { user: "ann", root: true });
      assert.deepEqual((await ranRemember()).map((line) => line.user), ["ann"]);
    },
  );

  await t.step(
    "authenticated, a form post without JavaScript runs and sets its cookie",
    async () => {
      const res = await formPost(ids.remember, { note: "x" }, {
        Authorization: ANN,
        Referer: `${server.origin}/secret`,
      });
      assert.equal(res.status, 303);
      assert.equal(res.headers.get("location"), "/secret");
      assert.ok(
        res.headers.getSetCookie().some((cookie) => cookie.startsWith("flavor=mint;")),
        String(res.headers.getSetCookie()),
      );
      assert.deepEqual((await ranRemember()).map((line) => line.user), ["ann", "ann"]);
    },
  );

  await t.step("an action module under lib/ gets the root chain only", async () => {
    for (const headers of [{}, { Authorization: ANN }] as Record<string, string>[]) {
      const res = await stubCall(ids.openDoor, headers);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-root-chain"), "ran");
      // Credentials or not, the secret folder's basic auth never ran: nobody was named.
      assert.deepEqual(decodeResult(await res.text()), { user: null, root: true });
    }
  });

  await t.step("the chain is the called action's, whatever else the request names", async () => {
    // React names a form's action in fields of its own; a Referer names a page. Neither counts.
    const claimsSecret = await formPost(ids.openDoor, { [`$ACTION_ID_${ids.remember}`]: "" }, {
      Referer: `${server.origin}/secret`,
    });
    assert.equal(claimsSecret.status, 303, "the open action ran behind the root chain only");
    const claimsOpen = await formPost(ids.remember, { [`$ACTION_ID_${ids.openDoor}`]: "" }, {
      Referer: `${server.origin}/`,
    });
    assert.equal(claimsOpen.status, 401, "the secret action stays behind its folder's chain");
    await claimsOpen.body?.cancel();
    assert.deepEqual((await ranRemember()).length, 2, "no run beyond the two authenticated ones");
  });

  await t.step("hono/cors answers a preflight, and marks the real response", async () => {
    const preflight = await server.fetch("/cors/data", {
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "Content-Type",
      },
    });
    await preflight.body?.cancel();
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), "https://app.example");
    assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /POST/);
    const res = await server.fetch("/cors/data", { headers: { Origin: "https://app.example" } });
    assert.deepEqual(await res.json(), { shared: true });
    assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example");
  });

  await t.step(
    "hono/jwt: 401 without a token, the payload in the page's state with one",
    async () => {
      const refused = await server.fetch("/jwt");
      await refused.body?.cancel();
      assert.equal(refused.status, 401);
      const forged = await sign({ sub: "mallory" }, "another-secret", "HS256");
      const wrong = await server.fetch("/jwt", { headers: { Authorization: `Bearer ${forged}` } });
      await wrong.body?.cancel();
      assert.equal(wrong.status, 401);
      const token = await sign({ sub: "user-42" }, JWT_SECRET, "HS256");
      const page = await server.fetch("/jwt", { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<p id="sub">user-42<\/p>/);
    },
  );
});
