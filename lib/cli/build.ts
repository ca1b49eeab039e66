/**
 * @module
 * `deno task build`: manifest and island bundles.
 */
import * as esbuild from "esbuild";
import { dev, root } from "../config.ts";
import { build } from "../build/mod.ts";

const started = performance.now();
await build({ root, dev });
await esbuild.stop();
console.log(`Built in ${Math.round(performance.now() - started)} ms`);
