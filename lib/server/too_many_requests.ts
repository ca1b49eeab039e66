/**
 * @module
 * The answer to a client over a rate limit: 429 with `Retry-After`. A browser navigating (a form
 * posted with JavaScript off: it accepts HTML) gets a short page saying how long to wait, with a
 * link back to the page it came from; a script (an island's action call) gets one line of text
 * and reads the status.
 */
import type { Context } from "hono";
import { escapeHtml } from "../errors/screen.ts";
import { nonceOf } from "./security.ts";

const STYLE = `:root{color-scheme:light dark}
body{max-width:34rem;margin:0 auto;padding:3rem 1.25rem;font:1.0625rem/1.6 system-ui,sans-serif}
h1{font-size:1.25rem;font-weight:500}`;

export function tooManyRequests(c: Context, retryAfterSeconds: number): Response {
  const headers = { "Retry-After": String(retryAfterSeconds), "Cache-Control": "no-store" };
  if (!c.req.header("accept")?.includes("text/html")) {
    return c.text(`Too Many Requests: retry in ${retryAfterSeconds} s`, 429, headers);
  }
  const wait = retryAfterSeconds === 1 ? "a second" : `${retryAfterSeconds} seconds`;
  return c.html(
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
      `<meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<meta name="robots" content="noindex"><title>Too many requests</title>` +
      `<style nonce="${escapeHtml(nonceOf(c))}">${STYLE}</style></head><body><main>` +
      `<h1>That was a lot in a short time</h1>` +
      `<p>Nothing is wrong: please wait ${wait}, then try again.</p>` +
      `<p><a href="${escapeHtml(pageBefore(c))}">Back to the page</a></p>` +
      `</main></body></html>`,
    429,
    headers,
  );
}

/**
 * The path (and query) of the page the request came from, never its origin: with one leading
 * slash, so no `Referer` (`http://host//evil.example/`) can make the link point off-site.
 */
function pageBefore(c: Context): string {
  const referer = URL.parse(c.req.header("referer") ?? "");
  if (!referer) return "/";
  return `/${referer.pathname.replace(/^[/\\]+/, "")}${referer.search}`;
}
