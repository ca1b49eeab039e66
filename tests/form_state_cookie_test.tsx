/**
 * @module
 * Attack 15, finding 2: the form-state cookie was `app-form-state` over https too, and nothing
 * binds a flash to a browser. So an attacker posted what they liked to an action the build does
 * not have, took the signed cookie the server gave them, and planted it in a victim's browser as
 * a plain cookie - from a sibling subdomain (`Domain=example.com`), or over plain http on the way:
 * the victim's page then showed the attacker's values in its fields, under "check what you entered
 * and send it again". Over https the cookie is now `__Host-app-form-state`, which only the app's
 * own https origin can set, and a plain one is not read there.
 */
import assert from "node:assert/strict";
import { captureLogs } from "shell/testing";
import { STALE_NOTICE } from "../lib/shared/kept_input.ts";
import { type AppFiles, memoryApp } from "./helpers/app.ts";

const ORIGIN = "https://app.example";
const GONE = "GoneGoneGoneGoneGone";
const PLANTED = "Pay 1000 to mallory";

const files: AppFiles = {
  routes: {
    "transfer.tsx": {
      default: () => (
        <form method="post">
          <input name="note" />
        </form>
      ),
    },
  },
};

/** The flash the server signs for a post to an action it does not have, from /transfer. */
async function flashFor(app: ReturnType<typeof memoryApp>, origin: string) {
  const form = new FormData();
  form.append("note", PLANTED);
  const res = await app.request(`${origin}/_action/${GONE}`, {
    method: "POST",
    body: form,
    headers: { Origin: origin, "Sec-Fetch-Site": "same-origin", Referer: `${origin}/transfer` },
  });
  assert.equal(res.status, 303);
  const [cookie] = res.headers.getSetCookie();
  const [pair] = cookie.split(";");
  const at = pair.indexOf("=");
  return { name: pair.slice(0, at), value: pair.slice(at + 1), cookie };
}

async function transferPage(app: ReturnType<typeof memoryApp>, origin: string, cookie: string) {
  const res = await app.request(`${origin}/transfer`, { headers: { Cookie: cookie } });
  assert.equal(res.status, 200);
  return await res.text();
}

Deno.test("over https, a form-state cookie planted under the plain name fills no form", async () => {
  using _logs = captureLogs();
  const app = memoryApp(files, { origins: [ORIGIN] });
  const flash = await flashFor(app, ORIGIN);
  // The victim's browser, with the attacker's cookie planted as a subdomain or http could.
  const planted = await transferPage(app, ORIGIN, `app-form-state=${flash.value}`);
  assert.ok(!planted.includes(PLANTED), "the attacker's value is in the victim's field");
  assert.ok(!planted.includes(STALE_NOTICE));

  assert.equal(flash.name, "__Host-app-form-state");
  assert.match(flash.cookie, /; Secure\b/);
  assert.match(flash.cookie, /; Path=\/(;|$)/);
  assert.doesNotMatch(flash.cookie, /Domain=/i);

  // The cookie as the app set it still works, once.
  const own = await transferPage(app, ORIGIN, `__Host-app-form-state=${flash.value}`);
  assert.ok(own.includes(STALE_NOTICE) && own.includes(`value="${PLANTED}"`));
  const again = await transferPage(app, ORIGIN, `__Host-app-form-state=${flash.value}`);
  assert.ok(!again.includes(STALE_NOTICE), "applied once");
});

Deno.test("over http, the plain cookie is the one", async () => {
  using _logs = captureLogs();
  const origin = "http://app.example";
  const app = memoryApp(files, { origins: [origin] });
  const flash = await flashFor(app, origin);
  assert.equal(flash.name, "app-form-state");
  const html = await transferPage(app, origin, `app-form-state=${flash.value}`);
  assert.ok(html.includes(STALE_NOTICE) && html.includes(`value="${PLANTED}"`));
});
