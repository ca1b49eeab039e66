/**
 * @module
 * The limit the framework is measured against: a bare `Deno.serve` that renders the SAME page -
 * the same component tree (`_app` → `_layout` → page, islands marked, props serialized) and the
 * same document around it: the page's and its islands' stylesheets linked, the build's
 * `<meta name="app-build">`, the speculation rules' nonce'd script - with React's
 * `renderToReadableStream`, and nothing else: no Hono, no middleware, no security headers, no
 * request id, no log line, no deadline, no failure handling. Its HTML is the framework's byte for
 * byte but for the nonce (tests/process/bench_limit_test.ts). `deno run -A bench/bare.ts` serves on
 * HOSTNAME:PORT the pages in `SSR_PAGES`.
 *
 * What the document adds is made here from the build's manifest, once, as the framework makes it
 * once per app; per request both pay only React's work of writing it. No JSX in this file: its
 * runtime would load React before `node_env.ts` picks the production build.
 */
import "../lib/cli/node_env.ts";
import { type ComponentType, createElement as h, Fragment } from "react";
import { renderToReadableStream } from "react-dom/server";
import manifest from "../_build/manifest.gen.ts";
import { registerIsland } from "../lib/islands/registry.ts";
import { RenderContext, type RenderContextValue } from "../lib/render/context.ts";
import { Stylesheets } from "../lib/render/styles.ts";
import { speculationRules } from "../lib/server/speculation.ts";
import type { PageProps } from "../lib/server/types.ts";
import { BUILD_META } from "../lib/shared/versions.ts";
import { SSR_PAGES } from "./pages.ts";

for (const island of manifest.islands) registerIsland(island.name, island.module.default);

const App = manifest.app!.default;
const pages = new Map(
  Object.entries(SSR_PAGES).map(([path, file]) => {
    const route = manifest.routes.find((r) => r.file === file);
    if (!route?.module.default) throw new Error(`no page routes/${file} in the manifest`);
    return [path, {
      Page: route.module.default,
      layouts: route.layouts.map((l) => l.default),
      styles: manifest.styles?.pages[file],
    }];
  }),
);
// A fixed nonce: generating one is part of the framework's work, not of the limit's.
const nonce = "bench";
const context: RenderContextValue = {
  nonce,
  assets: manifest.assets,
  islandStyles: manifest.styles?.islands,
};
// What the framework's page adds to the document: React hoists the `<meta>` into `<head>`; the
// rules' script is written where it renders, first in `<body>`.
const head = h(
  Fragment,
  null,
  h("meta", { name: BUILD_META, content: manifest.buildId }),
  h("script", {
    type: "speculationrules",
    nonce,
    dangerouslySetInnerHTML: { __html: speculationRules(manifest.routes) },
  }),
);

/** The limit's whole work for a request (`bench/ssr_cost.ts` calls it in-process too). */
export async function handler(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const page = pages.get(url.pathname);
  if (!page) return new Response("Not found", { status: 404 });
  const props: PageProps = { data: undefined, params: {}, url, state: {} };
  let Inner: ComponentType = () => h(page.Page, props);
  for (const Layout of page.layouts.toReversed()) {
    const Next: ComponentType = Inner;
    Inner = () => h(Layout, { ...props, Component: Next });
  }
  const Body = Inner;
  const WithHead: ComponentType = () => h(Fragment, null, head, h(Body));
  const stream = await renderToReadableStream(
    h(
      RenderContext,
      { value: context },
      h(Stylesheets, { hrefs: page.styles }),
      h(App, { ...props, Component: WithHead }),
    ),
    { nonce, signal: req.signal },
  );
  return new Response(stream, { headers: { "Content-Type": "text/html; charset=utf-8" } });
}

if (import.meta.main) {
  Deno.serve({
    port: Number(Deno.env.get("PORT") ?? 8001),
    hostname: Deno.env.get("HOSTNAME") ?? "127.0.0.1",
    onListen: ({ hostname, port }) => console.log(`Listening on http://${hostname}:${port}/`),
  }, handler);
}
