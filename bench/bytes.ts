/**
 * @module
 * Bytes to the browser: the JS and CSS a page needs before it is done — its scripts, module
 * preloads and stylesheets, and the modules those scripts import statically — raw and gzipped. Each
 * file is gzipped at level 9, as the build's precompressed copies are, which the server sends to a
 * browser that takes gzip (one that takes brotli, as every current one does, gets fewer bytes).
 * Also says whether the Sentry browser SDK is among them (it must load after the page, not on it).
 */
import { gzipSync } from "node:zlib";

export interface PageBytes {
  path: string;
  files: string[];
  js: { raw: number; gzip: number };
  css: { raw: number; gzip: number };
  /** Critical-path files that contain the Sentry browser SDK. */
  sentryFiles: string[];
}

const TAG = /<(script|link)\b([^>]*)>/gi;
const ATTR = /([\w-]+)\s*=\s*"([^"]*)"/g;
// esbuild's ESM output: `import"./a.js"`, `import{x}from"./a.js"`, `export*from"./a.js"`.
const STATIC_IMPORT = /(?:\bimport|\bfrom)\s*"(\.{0,2}\/[^"]+\.js)"/g;
// Markers only the SDK itself carries: its global carrier and its SDK name.
const SENTRY_SDK = /__SENTRY__|sentry\.javascript\./;

function referencedAssets(html: string): { js: string[]; css: string[] } {
  const js: string[] = [];
  const css: string[] = [];
  for (const [, tag, attrText] of html.matchAll(TAG)) {
    const attrs = Object.fromEntries(
      [...attrText.matchAll(ATTR)].map(([, k, v]) => [k.toLowerCase(), v]),
    );
    if (tag.toLowerCase() === "script" && attrs.src) js.push(attrs.src);
    if (tag.toLowerCase() === "link" && attrs.rel === "modulepreload" && attrs.href) {
      js.push(attrs.href);
    }
    if (tag.toLowerCase() === "link" && attrs.rel === "stylesheet" && attrs.href) {
      css.push(attrs.href);
    }
  }
  return { js, css };
}

export async function pageBytes(origin: string, path: string): Promise<PageBytes> {
  const res = await fetch(origin + path);
  if (!res.ok) throw new Error(`${path} answered ${res.status}`);
  const refs = referencedAssets(await res.text());
  const seen = new Set<string>();
  const result: PageBytes = {
    path,
    files: [],
    js: { raw: 0, gzip: 0 },
    css: { raw: 0, gzip: 0 },
    sentryFiles: [],
  };

  const visit = async (href: string, kind: "js" | "css"): Promise<void> => {
    const url = new URL(href, origin + path);
    if (url.origin !== origin || seen.has(url.pathname)) return;
    seen.add(url.pathname);
    const asset = await fetch(url);
    if (!asset.ok) throw new Error(`${url.pathname} (from ${path}) answered ${asset.status}`);
    const bytes = new Uint8Array(await asset.arrayBuffer());
    result.files.push(url.pathname);
    result[kind].raw += bytes.length;
    result[kind].gzip += gzipSync(bytes, { level: 9 }).length;
    if (kind !== "js") return;
    const text = new TextDecoder().decode(bytes);
    if (SENTRY_SDK.test(text)) result.sentryFiles.push(url.pathname);
    for (const [, imported] of text.matchAll(STATIC_IMPORT)) {
      await visit(new URL(imported, url).href, "js");
    }
  };

  for (const href of refs.js) await visit(href, "js");
  for (const href of refs.css) await visit(href, "css");
  return result;
}
