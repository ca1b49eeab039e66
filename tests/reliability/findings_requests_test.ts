/**
 * Issue 22, findings 9 and 12 (first half): requests the app got wrong.
 *  - `ALLOWED_HOSTS` and `APP_ORIGIN` compare host names as DNS does, case-insensitively:
 *    `Host: APP.EXAMPLE` is `app.example`; another host is still refused;
 *  - an action's `redirect()` to a URL with CR/LF (taken from a form, say) is refused with an
 *    error that says why, in the failure's log line, and no header of the client's is set.
 */
import assert from "node:assert/strict";
import { builtTarget, exchange, startTarget } from "./target.ts";

const FILES = {
  "routes/findings/ok.ts": `export const handler = { GET: () => new Response("ok") };\n`,
  "routes/_findings/actions.ts": `"use server";
    import { redirect } from "../../lib/mod.ts";
    export async function go(form: FormData) {
      redirect(String(form.get("to")));
    }
  `,
};

async function statusFor(port: number, host: string): Promise<number> {
  const head = `GET /findings/ok HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
  return (await exchange(port, head, { timeoutMs: 10_000 })).status;
}

Deno.test("finding 9: host names are compared case-insensitively", async (t) => {
  const built = await builtTarget(FILES);
  for (
    const [setting, env] of [
      ["ALLOWED_HOSTS", { ALLOWED_HOSTS: "app.example" }],
      ["APP_ORIGIN", { APP_ORIGIN: "http://app.example" }],
    ] as const
  ) {
    await t.step(setting, async () => {
      await using server = await startTarget(env, { root: built.root });
      for (const host of ["app.example", "APP.EXAMPLE", "App.Example"]) {
        assert.equal(await statusFor(server.port, host), 200, `Host: ${host}`);
      }
      assert.equal(await statusFor(server.port, "evil.example"), 400, "another host");
    });
  }
});

Deno.test("finding 12: redirect() to a URL with CR/LF is refused, saying why", async () => {
  const built = await builtTarget(FILES);
  const { go } = await built.actionIds();
  await using server = await startTarget({}, { root: built.root });
  const res = await server.fetch(`/_action/${go}`, {
    method: "POST",
    body: new URLSearchParams({ to: "/next\r\nSet-Cookie: planted=1" }),
    headers: { Origin: server.origin },
  });
  const html = await res.text();
  assert.equal(res.status, 500);
  assert.equal(res.headers.get("set-cookie"), null, "no header of the client's");
  const digest = /Digest: <code>([^<]+)<\/code>/.exec(html)?.[1];
  assert.ok(digest, "the failure screen with its digest");
  const line = await server.waitForLog((line) => line.digest === digest);
  const error = line.error as { name: string; message: string };
  assert.equal(error.name, "TypeError");
  assert.match(error.message, /^redirect\(\) refuses a URL with a control character/);
});
