/**
 * @module
 * The example's users in Chromium, with JavaScript on and off, against the example app from its
 * real build served on a loopback port: signing up (field errors shown, then the account page), the
 * session cookie as the browser keeps it, logging out and in again (a wrong password said as such,
 * `next` followed), `/account` and `/admin` for anonymous visitors (to `/login?next=…`), for a user
 * without the role (403 through `_error.tsx`) and for the admin (whose island's action says who
 * they are), logging out everywhere, and the guestbook signed with the signed-in user's name.
 */
import assert from "node:assert/strict";
import type { Browser, BrowserContext, Page } from "playwright-core";
import manifest from "@/_build/manifest.gen.ts";
import { createApp } from "shell/server";
import { serveApp } from "../../helpers/app.ts";
import { hydrated, launchBrowser, pageErrors } from "../../helpers/browser.ts";
import { PROJECT_ROOT } from "../../helpers/project_copy.ts";
import { addAdmin, ADMIN } from "../users.ts";
import { logIn } from "./log_in.ts";

const PASSWORD = "a long enough passphrase";

/** Fills and sends the sign-up form; with JavaScript, once it is hydrated. */
async function signUp(
  page: Page,
  origin: string,
  email: string,
  password: string,
  script: boolean,
) {
  await page.goto(`${origin}/signup`);
  if (script) await hydrated(page);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign up" }).click();
}

/** Whom a page says is signed in ("Signed in as <strong>…</strong>"), whatever its frame shows. */
function signedInAs(page: Page) {
  return page.locator("p", { hasText: "Signed in as" }).locator("strong");
}

async function sessionCookie(context: BrowserContext) {
  const cookies = await context.cookies();
  return cookies.find((cookie) => cookie.name === "session");
}

for (const script of [true, false]) {
  const mode = script ? "JavaScript on" : "JavaScript off";

  Deno.test(`the example's users in Chromium, ${mode}`, async (t) => {
    using kv = await Deno.openKv(":memory:");
    await addAdmin(kv);
    // Signing up and in hash a password in the request: on a loaded machine one can outlast the
    // default 10 s deadline, and the hash limiter then answers 503 (a shake run's log-in landed on
    // the action's URL so). The deadline is not what this test checks (tests/process/auth_test.ts
    // does the same).
    await using server = serveApp(
      createApp(manifest, { root: PROJECT_ROOT, kv, requestTimeoutMs: 60_000 }),
    );
    await using browser: Browser & AsyncDisposable = await launchBrowser();
    const context = await browser.newContext({ javaScriptEnabled: script });
    const page = await context.newPage();
    const errors = pageErrors(page);
    const email = `lin.${script ? "js" : "nojs"}@example.com`;

    await t.step("/account and /admin send an anonymous visitor to /login with next", async () => {
      for (const path of ["/account", "/admin"]) {
        const res = await page.goto(server.origin + path);
        assert.equal(res?.status(), 200);
        const url = new URL(page.url());
        assert.equal(url.pathname + url.search, `/login?next=${encodeURIComponent(path)}`);
        assert.equal(await page.getByRole("heading", { level: 1 }).textContent(), "Log in");
      }
    });

    await t.step("signing up: a field error first, then the account page", async () => {
      await signUp(page, server.origin, email, "short", script);
      const error = page.locator("#password-error");
      await error.waitFor();
      assert.equal(await error.textContent(), "8 characters at least.");
      assert.equal(await page.getByLabel("Email").inputValue(), email, "what was typed stays");
      assert.equal(await sessionCookie(context), undefined);

      await signUp(page, server.origin, email, PASSWORD, script);
      await page.waitForURL(`${server.origin}/account`);
      assert.equal(await signedInAs(page).textContent(), email);
      const cookie = await sessionCookie(context);
      assert.ok(cookie, "the session cookie");
      assert.match(cookie.value, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, "Lax");
      assert.equal(cookie.path, "/");
      assert.equal(cookie.secure, false, "http://127.0.0.1: no Secure");
      if (script) {
        // Script never reads the token: only the session's mark (lib/auth/restored.tsx).
        const visible = await page.evaluate(() => document.cookie);
        assert.equal(visible.includes(cookie.value), false);
        assert.match(visible, /^session-mark=[0-9a-z]+$/);
      }
    });

    await t.step("signed in without the role, /admin is 403 through _error.tsx", async () => {
      const res = await page.goto(server.origin + "/admin");
      assert.equal(res?.status(), 403);
      assert.equal(
        await page.getByRole("heading", { level: 1 }).textContent(),
        "Your account does not have access to this page.",
      );
    });

    await t.step("the guestbook signs with the signed-in user's name", async () => {
      await page.goto(server.origin + "/guestbook");
      if (script) await hydrated(page);
      await page.getByText(`Signing as lin.${script ? "js" : "nojs"}.`).waitFor();
      assert.equal(await page.getByLabel("Name").count(), 0, "no name to type");
      const message = `Signed in, ${mode}.`;
      await page.getByLabel("Message").fill(message);
      await page.getByRole("button", { name: "Sign" }).click();
      const entry = page.locator("li", { hasText: message });
      await entry.waitFor();
      assert.match(
        await entry.textContent() ?? "",
        new RegExp(`— lin\\.${script ? "js" : "nojs"},`),
      );
    });

    await t.step("Log out: the cookie goes, and /account asks to log in again", async () => {
      const before = (await sessionCookie(context))!.value;
      await page.goto(server.origin + "/account");
      await Promise.all([
        page.waitForURL(`${server.origin}/`),
        page.getByRole("button", { name: "Log out", exact: true }).click(),
      ]);
      assert.equal(await sessionCookie(context), undefined);
      await page.goto(server.origin + "/account");
      assert.equal(new URL(page.url()).pathname, "/login");
      // The old token, replayed by hand, signs nobody in.
      const replayed = await fetch(server.origin + "/account", {
        headers: { Cookie: `session=${before}` },
        redirect: "manual",
      });
      await replayed.body?.cancel();
      assert.equal(replayed.status, 303);
    });

    await t.step("logging in: a wrong password said as such, then on to next", async () => {
      await page.goto(`${server.origin}/login?next=%2Fguestbook`);
      if (script) await hydrated(page);
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill("not the password");
      await page.getByRole("button", { name: "Log in" }).click();
      const alert = page.getByRole("alert");
      await alert.waitFor();
      assert.equal(await alert.textContent(), "Wrong email or password.");
      assert.equal(await page.getByLabel("Email").inputValue(), email);
      await page.getByLabel("Password").fill(PASSWORD);
      await Promise.all([
        page.waitForURL(`${server.origin}/guestbook`),
        page.getByRole("button", { name: "Log in" }).click(),
      ]);
    });

    await t.step("Log out everywhere ends the session in another browser too", async () => {
      const other = await browser.newContext({ javaScriptEnabled: script });
      const elsewhere = await other.newPage();
      await logIn(elsewhere, server.origin, { email, password: PASSWORD }, { script });
      await page.goto(server.origin + "/account");
      await Promise.all([
        page.waitForURL(`${server.origin}/login`),
        page.getByRole("button", { name: "Log out everywhere" }).click(),
      ]);
      await elsewhere.goto(server.origin + "/account");
      assert.equal(new URL(elsewhere.url()).pathname, "/login", "the other browser is out too");
      await other.close();
    });

    await t.step(
      "the admin: /login?next=%2Fadmin leads to /admin, where the action knows them",
      async () => {
        await page.goto(server.origin + "/admin");
        assert.equal(new URL(page.url()).search, "?next=%2Fadmin");
        await logIn(page, server.origin, ADMIN, { next: "/admin", script });
        assert.equal(await signedInAs(page).textContent(), ADMIN.email);
        if (script) {
          await hydrated(page);
          await page.getByRole("button", { name: "Who am I?" }).click();
          await page.locator("output").waitFor();
          assert.equal(
            await page.locator("output").textContent(),
            `The action says: ${ADMIN.email}`,
          );
        }
      },
    );

    // The 403 page is Chromium's "failed to load resource" (status 403): expected, not a fault.
    const faults = errors.filter((error) => !error.includes("status of 403 (Forbidden)"));
    assert.deepEqual(faults, [], "no script error, no CSP violation");
    await context.close();
  });
}
