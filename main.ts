/**
 * The application's entry: `deno serve main.ts` and Deno Deploy serve its default export, made
 * from the environment's settings. `_build/manifest.gen.ts` is written by `deno task build`. Deno
 * stops the server itself on SIGTERM; `endOnSignals` ends the app's event streams then and bounds
 * the wait (`lib/cli/stop.ts`).
 */
import "./lib/cli/node_env.ts";
import manifest from "./_build/manifest.gen.ts";
import { appFromEnv } from "./lib/cli/app.ts";
import { endOnSignals } from "./lib/cli/stop.ts";

const started = await appFromEnv(manifest);
endOnSignals(started);

export default started.app;
