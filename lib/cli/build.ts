/**
 * @module
 * `deno task build`: manifest and island bundles, for production (`NODE_ENV=development`: for dev).
 */
import * as esbuild from "esbuild";
import { build } from "../build/mod.ts";
import { PROJECT_ROOT } from "./root.ts";

const started = performance.now();
await build({ root: PROJECT_ROOT, dev: Deno.env.get("NODE_ENV") === "development" });
await esbuild.stop();
console.log(`Built in ${Math.round(performance.now() - started)} ms`);
