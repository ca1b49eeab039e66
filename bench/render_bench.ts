/**
 * @module
 * Micro-benchmark: the framework's renderer (`renderPage`) turning each SSR page's tree into a
 * complete HTML stream, read to the end — no HTTP. Needs `deno task build` (the manifest).
 */
import "../lib/cli/node_env.ts";
import manifest from "../_build/manifest.gen.ts";
import { registerIsland } from "../lib/islands/registry.ts";
import { renderPage } from "../lib/render/page.tsx";
import { deadlineClock } from "../lib/server/deadline.ts";
import { SSR_PAGES } from "./pages.ts";

for (const island of manifest.islands) registerIsland(island.name, island.module.default);

for (const [path, file] of Object.entries(SSR_PAGES)) {
  if (path === "/streaming") continue; // its 300 ms wait would be all there is to measure
  const route = manifest.routes.find((r) => r.file === file)!;
  const tree = { app: manifest.app, layouts: route.layouts, page: route.module.default! };
  const url = new URL(path, "http://127.0.0.1:8000");
  Deno.bench(`render ${path}`, { group: "render" }, async () => {
    const res = await renderPage(tree, {
      context: { nonce: "bench", assets: manifest.assets },
      props: { data: undefined, params: {}, url, state: {} },
      status: 200,
      signal: new AbortController().signal,
      clock: deadlineClock(0),
    });
    await res.arrayBuffer();
  });
}
