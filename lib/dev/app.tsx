/**
 * @module
 * Live reload wired into the app, in dev only: the event stream route, the script for every page
 * (carrying the request's CSP nonce), and the streams closed when the app closes (`closed`) so
 * that the server's graceful shutdown, which waits for open responses, ends at once.
 */
import type { Hono, MiddlewareHandler } from "hono";
import type { ReactNode } from "react";
import { nonceOf } from "../server/security.ts";
import { liveReload } from "./reload.ts";

/** Adds live reload to `app`; returns the element a page renders for a given nonce. */
export function withLiveReload(app: Hono, closed: AbortSignal): (nonce: string) => ReactNode {
  const reload = liveReload(app);
  closed.addEventListener("abort", reload.close, { once: true });
  app.use(reloadFailureScreens(reload.script));
  return (nonce) => <script nonce={nonce} dangerouslySetInnerHTML={{ __html: reload.script }} />;
}

/**
 * The failure screen of a request that failed before its page started is not a React render, so
 * it gets the script appended: saving the fix brings the page back there too.
 */
function reloadFailureScreens(script: string): MiddlewareHandler {
  return async function reloadFailureScreens(c, next) {
    await next();
    const { body, status, headers } = c.res;
    if (status < 500 || !body || !headers.get("Content-Type")?.startsWith("text/html")) return;
    const tail = new TextEncoder().encode(`<script nonce="${nonceOf(c)}">${script}</script>`);
    const appended = new TransformStream<Uint8Array, Uint8Array>({
      flush: (controller) => controller.enqueue(tail),
    });
    c.res = new Response(body.pipeThrough(appended), c.res);
  };
}
