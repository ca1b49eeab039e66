/**
 * @module
 * `deno task start` (and the server `deno task dev` runs, with `NODE_ENV=development`): builds
 * when the sources changed since the last build of this mode, then serves the app on
 * HOSTNAME:PORT until SIGTERM or SIGINT, letting requests in flight finish (within their
 * deadlines) and exiting 0. A server that can no longer accept connections never looks healthy:
 * it logs one line and exits 1, for a supervisor to restart it. Under `deno task dev`
 * (`DEV_FRONT_TOKEN`), the dev server builds, says when (`dev/standby.ts`) and forwards the
 * browser's requests (`dev/forwarding.ts`); an app that cannot load says why in a few lines of its
 * own code (`errors/frames.ts`).
 */
import "./node_env.ts";
import { isStale } from "../build/fingerprint.ts";
import { behindDevFront } from "../dev/forwarding.ts";
import { standBy } from "../dev/standby.ts";
import { appStack } from "../errors/frames.ts";
import { log } from "../server/log.ts";
import type { Manifest } from "../server/manifest.ts";
import { DEFAULT_OPTIONS } from "../server/options.ts";
import { appFromEnv, serverFailed } from "./app.ts";
import { buildOrExit } from "./build_or_exit.ts";
import { PROJECT_ROOT } from "./root.ts";
import { settingsOrExit } from "./settings.ts";

const settings = settingsOrExit();
const { dev, hostname, port } = settings;
// Between the dev server and this process only: not a setting of the app.
const devFrontToken = dev ? Deno.env.get("DEV_FRONT_TOKEN") : undefined;

if (!devFrontToken && await isStale(PROJECT_ROOT, dev)) {
  await buildOrExit(dev);
}

if (devFrontToken) await standBy();

const manifestFile = dev ? "../../_build/dev/manifest.gen.ts" : "../../_build/manifest.gen.ts";
const manifest: Manifest = (await import(manifestFile).catch(dev ? cannotLoad : undefined)).default;
const { app, telemetry } = await appFromEnv(manifest, settings);
const handler = devFrontToken ? behindDevFront(app.fetch, devFrontToken) : app.fetch;

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

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, async () => {
    if (stopping) return;
    stopping = true;
    app.close();
    await shutdownWithin(server, graceMs);
    await telemetry?.flush(2000); // bounded: an unreachable Sentry must not hold the exit
    Deno.exit(0);
  });
}

/**
 * How long a graceful shutdown waits for connections. Every request ends by its deadline (a page's
 * stream has as long again after its shell), but Deno keeps a connection whose client stopped in
 * the middle of a body for as long as the client likes, and `shutdown()` waits for it: past the
 * deadlines, whatever is still open is no request of ours. With the deadline off, no bound.
 */
const requestTimeoutMs = settings.app.requestTimeoutMs ?? DEFAULT_OPTIONS.requestTimeoutMs;
const graceMs = requestTimeoutMs > 0 ? 2 * requestTimeoutMs + 1000 : Infinity;

async function shutdownWithin(server: Deno.HttpServer, ms: number): Promise<void> {
  const closed = server.shutdown().then(() => true);
  if (ms === Infinity) return void await closed;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  if (!await Promise.race([closed, late])) {
    log("warn", `connections still open ${ms} ms after SIGTERM: exiting without them`);
  }
  clearTimeout(timer);
}

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
