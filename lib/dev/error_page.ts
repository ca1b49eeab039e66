/**
 * @module
 * While the app cannot run — its build failed or its server exited — the dev process answers on
 * the app's address with what went wrong, and keeps the live-reload stream, so the browser shows
 * the error at once and comes back to the app by itself once it runs again.
 */
import { Hono } from "hono";
import { html, raw } from "hono/html";
import { stripVTControlCharacters } from "node:util";
import { liveReload } from "./reload.ts";

export interface Address {
  hostname: string;
  port: number;
}

export interface ErrorPage {
  stop(): Promise<void>;
}

const STYLE = `:root{color-scheme:light dark}body{margin:0;padding:2rem;
font:16px/1.5 system-ui,sans-serif}h1{font-size:1.1rem;margin:0 0 1rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:0.85rem/1.5 ui-monospace,Menlo,monospace}`;

export function serveErrorPage(address: Address, title: string, details: string): ErrorPage {
  const app = new Hono();
  const reload = liveReload(app);
  const page = html`
    <!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <title>${title}</title>
        <style>${raw(STYLE)}</style>
      </head>
      <body>
        <h1>${title}</h1>
        <pre>${stripVTControlCharacters(details)}</pre>
        <p>Fix the error and save: this page reloads by itself.</p>
        <script>${raw(reload.script)}</script>
      </body>
    </html>
  `;
  app.all("*", (c) => c.html(page, 500));
  const server = Deno.serve({ ...address, onListen() {} }, app.fetch);
  return {
    async stop() {
      reload.close();
      await server.shutdown();
    },
  };
}
