/**
 * @module
 * The failure screen, word for word as the product specification fixes it. The one place its
 * messages are written; the server renders it for 500s and the browser for client-side failures,
 * so this module must stay free of server-only APIs. The two sentences stay whole, past the line
 * width, so that a search for the specification's words finds them.
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
  /** The request's CSP nonce, for the screen's inline style. */
  nonce?: string;
}

/**
 * Set on `<html>` while the screen shows (`server` or `client`): the browser runtime reads it so a
 * late client-side failure never covers the digest of a server one.
 */
export const FAILURE_ATTRIBUTE = "data-failure";

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

// System fonts, no external asset: the screen must show when nothing else loads.
const STYLE =
  `:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fafafa;--rule:#d8dde3}
@media (prefers-color-scheme:dark){:root{--fg:#e6e8eb;--muted:#9aa3ad;--bg:#14171a;--rule:#353b42}}
html,body{min-height:100%;margin:0}
body{display:flex;align-items:center;justify-content:center;box-sizing:border-box;min-height:100vh;
padding:2rem 1.25rem;background:var(--bg);color:var(--fg);
font:1.0625rem/1.6 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;-webkit-font-smoothing:antialiased}
main{max-width:34rem}
main:has(pre){max-width:56rem}
h1{max-width:34rem;font-size:inherit;font-weight:500;margin:0;text-wrap:pretty}
p{margin:1.5rem 0 0;padding-top:1.25rem;border-top:1px solid var(--rule);color:var(--muted);font-size:.9375rem}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{color:var(--fg);letter-spacing:.06em;user-select:all}
pre{margin:1.5rem 0 0;padding:1rem;border:1px solid var(--rule);border-radius:6px;overflow-x:auto;
color:var(--muted);font-size:.8125rem;line-height:1.5}`;

/** `<head>` and `<body>` of the screen, as `document.documentElement.innerHTML` takes them. */
export function screenMarkup({ nonce, ...options }: ScreenOptions): string {
  return `<head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="robots" content="noindex"><title>Application error</title>` +
    `<style${nonceAttribute(nonce)}>${STYLE}</style></head><body>${screenMain(options)}</body>`;
}

/**
 * The screen over a page already sent, for a browser without JavaScript, where the script that
 * replaces the page cannot run: appended to the page, it hides the rest of the body.
 */
export function screenOverPage({ nonce, ...options }: ScreenOptions): string {
  const hideThePage = `body>:not(noscript[${FAILURE_ATTRIBUTE}]){display:none!important}`;
  return `<noscript ${FAILURE_ATTRIBUTE}="server"><style${nonceAttribute(nonce)}>${STYLE}\n` +
    `${hideThePage}</style>${screenMain(options)}</noscript>`;
}

// The page's one `main` landmark; the alert inside it (a `main` may not take that role) is what
// a screen reader announces when the screen replaces a page.
function screenMain({ host, digest, details }: ScreenOptions): string {
  const message = digest === undefined ? clientErrorMessage(host) : serverErrorMessage(host);
  return `<main><div role="alert"><h1>${escapeHtml(message)}</h1>` +
    (digest === undefined ? "" : `<p>Digest: <code>${escapeHtml(digest)}</code></p>`) +
    `</div>` +
    (details === undefined ? "" : `<pre>${escapeHtml(details)}</pre>`) +
    `</main>`;
}

const nonceAttribute = (nonce?: string) => nonce ? ` nonce="${escapeHtml(nonce)}"` : "";

/** The whole screen as a document, for a response. */
export function screenDocument(options: ScreenOptions): string {
  const side = options.digest === undefined ? "client" : "server";
  return `<!DOCTYPE html><html lang="en" ${FAILURE_ATTRIBUTE}="${side}">${
    screenMarkup(options)
  }</html>`;
}
