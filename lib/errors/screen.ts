/**
 * @module
 * The failure screen, word for word as the product specification fixes it. The one place its
 * messages are written; the server renders it for 500s and the browser for client-side failures,
 * so this module must stay free of server-only APIs.
 */

export function clientErrorMessage(host: string): string {
  return `Application error: a client-side exception has occurred while loading ${host} (see the browser console for more information).`;
}

export function serverErrorMessage(host: string): string {
  return `Application error: a server-side exception has occurred while loading ${host} (see the server logs for more information).`;
}

export interface ScreenOptions {
  host: string;
  /** Present for server failures. */
  digest?: string;
  /** Dev only: message and stack, shown under the digest. */
  details?: string;
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

// System fonts and no external asset, so the screen shows even when nothing else loads.
const STYLE = `:root{color-scheme:light dark;--fg:#111;--muted:#555;--bg:#fff;--rule:#ddd}
@media (prefers-color-scheme:dark){:root{--fg:#eee;--muted:#aaa;--bg:#111;--rule:#333}}
html,body{height:100%;margin:0}
body{display:flex;align-items:center;justify-content:center;background:var(--bg);color:var(--fg);
font:16px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:36rem;padding:2rem}
h1{font-size:1.05rem;font-weight:500;margin:0}
p{margin:1rem 0 0;padding-top:1rem;border-top:1px solid var(--rule);color:var(--muted);
font:0.9rem/1.5 ui-monospace,SFMono-Regular,Menlo,monospace}
pre{margin:1rem 0 0;white-space:pre-wrap;overflow-wrap:anywhere;color:var(--muted);
font:0.8rem/1.5 ui-monospace,SFMono-Regular,Menlo,monospace}`;

/** The `<main>` of the screen: the message, and the digest for server failures. */
export function screenBody({ host, digest, details }: ScreenOptions): string {
  const message = digest === undefined ? clientErrorMessage(host) : serverErrorMessage(host);
  return `<main role="alert"><h1>${escapeHtml(message)}</h1>` +
    (digest === undefined ? "" : `<p>Digest: ${escapeHtml(digest)}</p>`) +
    (details === undefined ? "" : `<pre>${escapeHtml(details)}</pre>`) +
    `</main>`;
}

/** A whole document; its only inline code is the style, which needs the nonce under our CSP. */
export function screenDocument(options: ScreenOptions & { nonce?: string }): string {
  const nonce = options.nonce ? ` nonce="${escapeHtml(options.nonce)}"` : "";
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="robots" content="noindex"><title>Application error</title>` +
    `<style${nonce}>${STYLE}</style></head><body>${screenBody(options)}</body></html>`;
}

export { STYLE as SCREEN_STYLE };
