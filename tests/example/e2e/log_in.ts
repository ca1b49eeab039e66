/**
 * @module
 * A browser signed in to the example: through `/login`, as a person would (`logIn`, for the tests
 * of signing in), or with the test kit's `signInAs` (`signInBrowser`, for every other test: no
 * password hash, no 503 on a busy machine).
 */
import type { BrowserContext, Page } from "playwright-core";
import type { App } from "shell/server";
import { TestClient } from "shell/testing";
import { hydrated } from "../../helpers/browser.ts";

/**
 * Signs the browser `context` in to `app`, served at `origin`, as `user` (or their email): the
 * session's cookies, as the login form leaves them, begun by the test kit's `signInAs`.
 */
export async function signInBrowser(
  context: BrowserContext,
  app: App,
  origin: string,
  user: { readonly email: string } | string,
): Promise<void> {
  const client = new TestClient(app);
  await client.signInAs(user);
  const cookies = await client.cookies();
  await context.addCookies(cookies.map(({ path: _, ...cookie }) => ({ ...cookie, url: origin })));
}

/**
 * Logs `page` in through the login form — hydrated first, unless its browser runs no JavaScript
 * (`script: false`) — and resolves once the browser has landed on `next`.
 */
export async function logIn(
  page: Page,
  origin: string,
  { email, password }: { email: string; password: string },
  { next = "/account", script = true }: { next?: string; script?: boolean } = {},
): Promise<void> {
  await page.goto(`${origin}/login?next=${encodeURIComponent(next)}`);
  if (script) await hydrated(page);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await Promise.all([
    page.waitForURL((url) => url.pathname === new URL(next, origin).pathname),
    page.getByRole("button", { name: "Log in" }).click(),
  ]);
}
