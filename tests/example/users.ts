/**
 * @module
 * The example's users in tests: an admin made in the app's store as `deno task users:add` makes
 * one, and a browser page that logs in through `/login` as a person would.
 */
import type { Page } from "playwright-core";
import { createUser } from "shell/auth";
import { hydrated } from "../helpers/browser.ts";

export const ADMIN = { email: "admin@example.com", password: "correct horse battery" };

/** The first admin, in `kv`. */
export async function addAdmin(kv: Deno.Kv): Promise<void> {
  await createUser(kv, { ...ADMIN, roles: ["admin"] });
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
