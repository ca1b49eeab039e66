/**
 * @module
 * Micro-benchmark: Hono's router matching URLs against the manifest's route patterns, as the
 * server registers them (most specific first). Needs `deno task build` (the manifest).
 */
import "../lib/cli/node_env.ts";
import { Hono } from "hono";
import manifest from "../_build/manifest.gen.ts";

const app = new Hono();
for (const route of manifest.routes) app.all(route.pattern, () => new Response(route.file));

const PATHS = ["/", "/counter", "/blog/hello-world", "/docs/getting/started/deep", "/nothing/here"];
for (const path of PATHS) app.router.match("GET", path); // the router compiles on first use

for (const path of PATHS) {
  Deno.bench(`match ${path}`, { group: "router" }, () => {
    app.router.match("GET", path);
  });
}
