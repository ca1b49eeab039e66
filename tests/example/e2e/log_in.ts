/**
 * @module
 * A browser page that logs in to the example through `/login`, as a person would.
 */
import type { Page } from "playwright-core";
import { hydrated } from "../../helpers/browser.ts";

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
