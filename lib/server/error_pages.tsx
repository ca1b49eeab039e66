/**
 * @module
 * How a request ends on an expected error (`httpError`, `notFound()`, an unknown URL): with its
 * status and message, and nothing else - no digest, no log line, no report. What wants JSON (an
 * API route, an island's action call, an `Accept` that prefers it) gets
 * `{"error":{"status":...,"message":...}}`; a page gets the nearest `_error.tsx` inside the layouts
 * of its folder and above (`_404.tsx`, inside the root's, for 404), or a plain page of the app's; a
 * form posted to an action without JavaScript gets the error page of the page it was posted from.
 * Once a page's shell went out its status cannot change: the error page's component then takes the
 * failed Suspense boundary's place. An error page that fails is a failure like any other.
 */
import type { Context } from "hono";
import { accepts } from "hono/accepts";
import { TrieRouter } from "hono/router/trie-router";
import type { ComponentType, ReactNode } from "react";
// React's own `jsx`, not ours: these are no islands.
import { jsx } from "react/jsx-runtime";
import { formPage } from "./form_page.ts";
import type { Failures } from "../errors/failure.ts";
import { type HttpError, isHttpError } from "../shared/http_error.ts";
import { markNotFoundRoute } from "../errors/not_found.ts";
import type { RenderContextValue } from "../render/context.ts";
import { type PageTree, renderMarkup } from "../render/page.tsx";
import type { BoundaryFailure } from "../render/stream_failure.ts";
import type { ErrorPageEntry, Manifest, ManifestRoute } from "./manifest.ts";
import { nonceOf } from "./security.ts";
import type { ErrorPageProps, PageProps, RenderInit, State } from "./types.ts";
import { internalsOf } from "./internals.ts";
import { timeLimit } from "./time_limit.ts";

export interface ErrorPagesOptions {
  manifest: Manifest;
  failures: Failures;
  /** The app's public origins, to find the page a form was posted from. */
  origins?: string[];
  /** How long an error page shown in place may take to render; `0`: no limit. */
  timeoutMs: number;
  /** Renders `tree` as the response, `pageProps` for its page only. */
  render(
    c: Context,
    tree: PageTree,
    props: PageProps<unknown>,
    pageProps: Record<string, unknown>,
    init: RenderInit,
  ): Promise<Response>;
  /** What the framework's components read while rendering for `c`. */
  renderContext(c: Context): RenderContextValue;
}

export interface ErrorPages {
  /** The response to `error`, thrown before anything was sent. */
  respond(c: Context, error: HttpError): Promise<Response>;
  /** What ends a page whose Suspense boundary threw `error` after its shell went out. */
  inPlace(c: Context, error: HttpError): BoundaryFailure;
}

declare module "./internals.ts" {
  interface Internals {
    /** How many boundaries of this page showed an expected error in place. */
    errorsInPlace: number;
  }
}

/**
 * Where the page an error belongs to is: its route (none for an unknown URL), the error page of
 * its folder (an unknown URL's too), URL and params.
 */
interface PagePlace {
  route?: ManifestRoute;
  errorPage?: ErrorPageEntry;
  url: URL;
  params: Record<string, string>;
}

export function errorPages(options: ErrorPagesOptions): ErrorPages {
  const { manifest, failures, render } = options;
  const pages = new TrieRouter<ManifestRoute>();
  for (const route of manifest.routes) pages.add("GET", route.pattern, route);

  /** The page a request's error shows on: a form's own page for an action posted without JS. */
  const placeOf = (c: Context): PagePlace => {
    if (internalsOf(c).action && !internalsOf(c).stubCall) {
      const { pathname, search } = formPage(c, options.origins);
      const url = new URL(pathname + search, c.req.url);
      const [[first]] = pages.match("GET", url.pathname) as [[ManifestRoute, Params][]];
      return first
        ? { route: first[0], errorPage: first[0].errorPage, url, params: first[1] }
        : { url, params: {} };
    }
    const { routeEntry: route, folder } = internalsOf(c);
    const errorPage = route ? route.errorPage : folder?.errorPage;
    return { route, errorPage, url: new URL(c.req.url), params: route ? c.req.param() : {} };
  };

  const treeOf = (place: PagePlace, status: number): PageTree => {
    if (status === 404 && manifest.notFound) {
      return {
        app: manifest.app,
        layouts: manifest.rootLayouts,
        page: manifest.notFound.default,
        styles: manifest.styles?.notFound,
      };
    }
    const errorPage = place.errorPage ?? manifest.errorPage;
    if (errorPage) {
      return {
        app: manifest.app,
        layouts: errorPage.layouts,
        page: errorPage.module.default,
        styles: manifest.styles?.errorPages[errorPage.file],
      };
    }
    const { rootLayouts } = manifest;
    return {
      app: manifest.app,
      layouts: rootLayouts,
      page: plainPage(rootLayouts.length > 0),
      styles: manifest.styles?.plain,
    };
  };

  const propsOf = (c: Context, place: PagePlace): PageProps<unknown> => ({
    data: undefined,
    params: place.params,
    url: place.url,
    state: c.var as State,
  });

  return {
    async respond(c, error) {
      const { status, message, code } = error;
      const headers = new Headers(error.headers);
      if (status === 404) markNotFoundRoute(c);
      if (wantsJson(c)) {
        headers.set("Content-Type", "application/json");
        const body = {
          error: code === undefined ? { status, message } : { status, message, code },
        };
        return new Response(JSON.stringify(body), { status, headers });
      }
      const place = placeOf(c);
      const props = propsOf(c, place);
      try {
        const tree = treeOf(place, status);
        return await render(c, tree, props, { status, message, code }, { status, headers });
      } catch (failure) {
        if (!isHttpError(failure)) return failures.response(c, failure);
        // A layout around the error page refused as well: the plain page, in nothing of the app's.
        try {
          const bare = { layouts: [], page: plainPage(false) };
          return await render(c, bare, props, { status, message, code }, { status, headers });
        } catch (failure) {
          return failures.response(c, failure);
        }
      }
    },

    inPlace(c, error) {
      const { status, message, code } = error;
      const index = internalsOf(c).errorsInPlace ?? 0;
      internalsOf(c).errorsInPlace = index + 1;
      const digest = `app-error-${index}`;
      const nonce = nonceOf(c);
      const place = placeOf(c);
      let tail = "";
      if (status === 404) {
        markNotFoundRoute(c);
        tail += `<script nonce="${nonce}">document.head.append(Object.assign(` +
          `document.createElement("meta"),{name:"robots",content:"noindex"}))</script>`;
      }
      const { page } = treeOf(place, status);
      const Shown = page === plainPage(true) || page === plainPage(false) ? InPlace : page;
      const props = { ...propsOf(c, place), status, message, code } as ErrorPageProps;
      const context = options.renderContext(c);
      const { signal } = c.req.raw;
      // The page's stream waits for it: an error page that never finishes must not hold it open.
      const limit = options.timeoutMs > 0 ? timeLimit(options.timeoutMs) : undefined;
      const limited = limit ? AbortSignal.any([signal, limit.signal]) : signal;
      const markup = renderMarkup(jsx(Shown, props), context, limited)
        .finally(() => limit?.clear())
        .catch((failure) => {
          if (signal.aborted) throw failure; // the client left: nobody to show it to
          failures.record(c, failure, 500); // a broken error page is a bug to hear about
          return renderMarkup(jsx(InPlace, props), context, signal);
        });
      return {
        tail: markup.then((html) => tail + shownInPlace(digest, html, nonce), () => ""),
        stop: false,
        digest,
      };
    },
  };
}

type Params = Record<string, string>;

/**
 * JSON for an island's action call, an API route (a handler and no page), and a request whose
 * `Accept` prefers `application/json` to `text/html` (`*\/*` alone does not).
 */
export function wantsJson(c: Context): boolean {
  if (internalsOf(c).stubCall) return true;
  const route = internalsOf(c).routeEntry;
  if (route && route.module.handler && !route.module.default) return true;
  return accepts(c, {
    header: "Accept",
    supports: ["text/html", "application/json"],
    default: "text/html",
  }) === "application/json";
}

/**
 * The error's HTML in place of the failed boundary's fallback: React marked the boundary's
 * `<template>` with `digest`; the script swaps what follows it, up to the boundary's end, for the
 * HTML. Without JavaScript the boundary keeps its fallback and the HTML shows at the page's end.
 */
function shownInPlace(digest: string, html: string, nonce: string): string {
  const source = `${digest}-html`;
  return `<template id="${source}">${html}</template>` +
    `<script nonce="${nonce}">${SWAP}(document,"${digest}","${source}")</script>` +
    `<noscript>${html}</noscript>`;
}

// `<!--$!--><template data-dgst=...></template>fallback<!--/$-->`: boundaries nest, so count them.
const SWAP = `(function(d,g,s){var t=d.querySelector('template[data-dgst="'+g+'"]'),` +
  `h=d.getElementById(s);if(!t||!h)return;h.remove();` +
  `for(var n=t.nextSibling,k=0,x;n;n=x){x=n.nextSibling;if(n.nodeType===8){` +
  `if(n.data==="/$"){if(!k)break;k--}else if(n.data[0]==="$")k++}n.remove()}` +
  `var f=h.content;f.querySelectorAll("title").forEach(function(e){e.remove()});t.after(f)})`;

// The app's plain error page, with and without a `<main>` of its own (the root layouts usually
// have one), made once: `inPlace` tells them from an app's own page by identity.
const PLAIN = [false, true].map((landmark) => {
  function PlainErrorPage({ status, message }: ErrorPageProps): ReactNode {
    const content = (
      <>
        <title>{message}</title>
        <h1>{status} &mdash; {message}</h1>
      </>
    );
    return landmark ? <main>{content}</main> : content;
  }
  return PlainErrorPage;
});

function plainPage(insideLayouts: boolean): ComponentType<ErrorPageProps> {
  return PLAIN[insideLayouts ? 0 : 1];
}

/** What shows in place of a boundary when the app has no error page of its own. */
function InPlace({ message }: ErrorPageProps): ReactNode {
  return <p role="alert">{message}</p>;
}
