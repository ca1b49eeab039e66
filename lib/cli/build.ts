/**
 * @module
 * `deno task build`: manifest and island bundles, for production (`NODE_ENV=development`: for dev).
 */
import { buildOrExit } from "./build_or_exit.ts";

const started = performance.now();
await buildOrExit(Deno.env.get("NODE_ENV") === "development");
console.log(`Built in ${Math.round(performance.now() - started)} ms`);
