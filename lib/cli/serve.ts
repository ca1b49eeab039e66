/**
 * @module
 * The server: serves the app on HOSTNAME:PORT until SIGTERM or SIGINT, letting requests in flight
 * finish (within their deadlines) and exiting 0. Loaded by `start.ts` once the build is current:
 * from source under `deno task dev` (`NODE_ENV=development`), from the bundle
 * (`_build/server/serve.js`, `build/server_bundle.ts`) in production. Run by the launcher
 * (`launcher.ts`, with `--parent-stdin`), it stops the same way once the launcher is gone, however
 * it went (SIGKILL included): a server never outlives its launcher, holding the port. A server that
 * can no longer accept connections never looks healthy: it logs one line and exits 1, for a
 * supervisor to restart it. Under `deno task dev` (`DEV_FRONT_TOKEN`), the dev server builds, says
 * when (`dev/standby.ts`) and forwards the browser's requests (`dev/forwarding.ts`); an app that
 * cannot load says why in a few lines of its own code (`errors/frames.ts`).
 */
import "./node_env.ts";
import { appStack } from "../errors/frames.ts";
import type { Manifest } from "../server/manifest.ts";
import { appFromEnv, serverFailed } from "./app.ts";
import { PROJECT_ROOT } from "./root.ts";
import { declaredSettings } from "./declared.ts";
import { settingsOrExit } from "./settings.ts";
import { exitPastGrace, FLUSH_MS, graceMs, untilParentGone } from "./stop.ts";

// The product's settings with the framework's, before building: one message names every problem.
// A declaration that cannot load says why in a few lines of its own code, as an app that cannot.
const settings = settingsOrExit(await declaredSettings().catch(cannotLoad));
const { dev, hostname, port } = settings;
// Between the dev server and this process only: not a setting of the app.
const devFrontToken = dev ? Deno.env.get("DEV_FRONT_TOKEN") : undefined;
// Between the launcher and this process only: its end is the end of our stdin.
const parentGone = Deno.args.includes("--parent-stdin") ? untilParentGone() : undefined;
let serving = false;
// Before anything else: a launcher killed while this one loads takes it along too.
parentGone?.then(() => serving || Deno.exit(0));

// What only `deno task dev` uses is imported only there: a module, once loaded, is held for as
// long as the process lives.
if (devFrontToken) await (await import("../dev/standby.ts")).standBy();

// Literal imports: the bundle holds the production manifest (and the routes it imports).
const manifest: Manifest = dev
  ? (await import("../../_build/dev/manifest.gen.ts").catch(cannotLoad)).default
  : (await import("../../_build/manifest.gen.ts")).default;
const { app, telemetry } = await appFromEnv(manifest, settings);
const handler = devFrontToken
  ? (await import("../dev/forwarding.ts")).behindDevFront(app.fetch, devFrontToken)
  : app.fetch;

let server: Deno.HttpServer;
try {
  server = Deno.serve({
    port,
    hostname,
    onListen: ({ hostname, port }) => console.log(`Listening on http://${hostname}:${port}/`),
  }, handler);
} catch (error) {
  // Said plainly, and a non-zero exit: the app keeps unhandled rejections from ending it.
  console.error(`Cannot listen on ${hostname}:${port}: ${(error as Error).message}`);
  Deno.exit(1);
}

serving = true;
let stopping = false;
const stop = async (why: string) => {
  if (stopping) return;
  stopping = true;
  await app.close();
  const ms = graceMs(settings);
  if (ms !== Infinity) setTimeout(() => exitPastGrace(ms, why, telemetry), ms);
  await server.shutdown();
  await telemetry?.flush(FLUSH_MS); // bounded: an unreachable Sentry must not hold the exit
  Deno.exit(0);
};
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, () => stop(signal));
}
parentGone?.then(() => stop("the launcher's end"));

// The server stops serving only when asked to; otherwise its accept loop failed (no more file
// descriptors, say) and a process that answers nothing must not look alive.
server.finished.then(
  () => stopping || serverFailed("the server stopped accepting connections", telemetry),
  (error) => serverFailed(`the server failed: ${error}`, telemetry),
);

function cannotLoad(error: unknown): never {
  console.error(appStack(error instanceof Error && error.stack || String(error), PROJECT_ROOT));
  Deno.exit(1);
}
