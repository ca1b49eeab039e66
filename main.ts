/**
 * The application's entry: `deno serve main.ts` and Deno Deploy serve its default export, made
 * from the environment's settings. `_build/manifest.gen.ts` is written by `deno task build`.
 */
import "./lib/cli/node_env.ts";
import manifest from "./_build/manifest.gen.ts";
import { appFromEnv } from "./lib/cli/app.ts";

const { app } = await appFromEnv(manifest);

export default app;
