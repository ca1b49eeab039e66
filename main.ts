/**
 * The application's entry: `deno task start`, `deno serve main.ts` and Deno Deploy all serve its
 * default export. `_build/manifest.gen.ts` is written by `deno task build`.
 */
import "./lib/node_env.ts";
import manifest from "./_build/manifest.gen.ts";
import { createServer } from "./lib/server.tsx";

export default createServer(manifest);
