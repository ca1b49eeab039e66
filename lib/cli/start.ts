/**
 * @module
 * `deno task start`'s server (run by the launcher, `launch.ts`, or on its own), and the server
 * `deno task dev` runs (`NODE_ENV=development`): builds when the sources changed since the last
 * build of this mode, then serves the app (`serve.ts`), in production from the server's bundle
 * (`load_built.ts`).
 */
import "./node_env.ts";
import { loadBuilt } from "./load_built.ts";

await loadBuilt("serve");
