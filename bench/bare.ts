/**
 * @module
 * The limit the framework is measured against: a bare `Deno.serve` that renders the SAME component
 * tree (`_app` → `_layout` → page, islands marked, props serialized) with React's
 * `renderToReadableStream`, and nothing else — no Hono, no middleware, no security headers, no
 * failure handling. `deno run -A bench/bare.ts` serves on HOSTNAME:PORT the pages in `SSR_PAGES`.
 * No JSX in this file: its runtime would load React before `node_env.ts` picks the production build.
 */
import "../lib/cli/node_env.ts";
import { type ComponentType, createElement as h } from "react";
import { renderToReadableStream } from "react-dom/server";
import manifest from "../_build/manifest.gen.ts";
import { registerIsland } from "../lib/islands/registry.ts";
import { RenderContext } from "../lib/render/context.ts";
import type { PageProps } from "../lib/server/types.ts";
import { SSR_PAGES } from "./pages.ts";

for (const island of manifest.islands) registerIsland(island.name, island.module.default);

const App = manifest.app!.default;
const pages = new Map(
  Object.entries(SSR_PAGES).map(([path, file]) => {
    const route = manifest.routes.find((r) => r.file === file);
    if (!route?.module.default) throw new Error(`no page routes/${file} in the manifest`);
    return [path, { Page: route.module.default, layouts: route.layouts.map((l) => l.default) }];
  }),
);
// A fixed nonce: generating one is part of the framework's work, not of the limit's.
const context = { nonce: "bench", assets: manifest.assets };

Deno.serve({
  port: Number(Deno.env.get("PORT") ?? 8001),
  hostname: Deno.env.get("HOSTNAME") ?? "127.0.0.1",
  onListen: ({ hostname, port }) => console.log(`Listening on http://${hostname}:${port}/`),
}, async (req) => {
  const url = new URL(req.url);
  const page = pages.get(url.pathname);
  if (!page) return new Response("Not found", { status: 404 });
  const props: PageProps = { data: undefined, params: {}, url, state: {} };
  let Inner: ComponentType = () => h(page.Page, props);
  for (const Layout of page.layouts.toReversed()) {
    const Next: ComponentType = Inner;
    Inner = () => h(Layout, { ...props, Component: Next });
  }
  const stream = await renderToReadableStream(
    h(RenderContext, { value: context }, h(App, { ...props, Component: Inner })),
    { nonce: context.nonce, signal: req.signal },
  );
  return new Response(stream, { headers: { "Content-Type": "text/html; charset=utf-8" } });
});
