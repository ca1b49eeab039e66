/**
 * @module
 * What the dev server answers in place of the app while the app cannot run - its build failed,
 * its server could not start or stopped: what went wrong, with the dev client, so the page
 * reloads by itself once a save brings the app back.
 */
import { stripVTControlCharacters } from "node:util";
import { escapeHtml } from "../errors/screen.ts";

const STYLE = `:root{color-scheme:light dark}body{margin:0;padding:2rem;
font:16px/1.5 system-ui,sans-serif}h1{font-size:1.1rem;margin:0 0 1rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:0.85rem/1.5 ui-monospace,Menlo,monospace}`;

export function errorPage(title: string, details: string, devClient: string): Response {
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
${devClient}
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<pre>${escapeHtml(stripVTControlCharacters(details).trim())}</pre>
<p>Fix the error and save: this page reloads by itself.</p>
</body>
</html>
`;
  return new Response(html, {
    status: 500,
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" },
  });
}
