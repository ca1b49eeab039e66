/**
 * @module
 * The app as the environment describes it, for every entry point: `main.ts` (Deno Deploy,
 * `deno serve`) and `lib/cli/start.ts` (`deno task start`, and the server `deno task dev` runs).
 * Settings that make no sense (the framework's and the product's, `routes/_settings.ts`, which the
 * manifest imports), and a KV store that cannot be used, stop the start here, with a
 * message naming each and exit code 1; a store whose file is deleted under the running server ends
 * it the same way (`serverFailed`), rather than lose every write since without a word.
 * Telemetry is loaded only when configured. The process's one listener for unhandled rejections is
 * installed here too, and the way out for a server that can no longer serve (`serverFailed`): the
 * app itself touches nothing process-wide.
 */
import { logUnhandledRejection } from "../errors/failure.ts";
import { log } from "../server/log.ts";
import { withRelease } from "../sentry/config.ts";
import { type App, createApp } from "../server/app.tsx";
import type { Manifest } from "../server/manifest.ts";
import type { Telemetry } from "../server/telemetry.ts";
import { PROJECT_ROOT } from "./root.ts";
import { type Settings, settingsOrExit } from "./settings.ts";
import { loadTelemetry } from "./telemetry.ts";
import { denoTracing } from "../otel/detect.ts";
import { storeOrExit, storePath } from "./store.ts";
import { watchStoreFile } from "../kv/store.ts";

export interface Started {
  app: App;
  /** The app's store: the entry point closes it once the app is done with it. */
  kv: Deno.Kv;
  settings: Settings;
  telemetry?: Telemetry;
}

export async function appFromEnv(
  manifest: Manifest,
  settings: Settings = settingsOrExit(manifest.settings),
): Promise<Started> {
  const telemetry = await loadTelemetry(
    settings.sentry && withRelease(settings.sentry, manifest.buildId),
  );
  // Deno's exporter loses traces an endpoint refuses without a word: one look, not awaited.
  if (denoTracing() && !Deno.env.get("DENO_DEPLOYMENT_ID")) {
    import("../otel/probe.ts").then(({ probeOtlp }) => probeOtlp((name) => Deno.env.get(name)));
  }
  const kv = await storeOrExit(settings.kvPath);
  const file = storePath(settings.kvPath);
  if (file && file !== ":memory:") {
    await watchStoreFile(file, (why) =>
      serverFailed(
        `the KV store's file ${why} while the server held it: writes since then are in a file ` +
          "nobody can open again; restore it from a backup",
        telemetry,
      ));
  }
  const app = createApp(manifest, { ...settings.app, root: PROJECT_ROOT, telemetry, kv });
  surviveUnhandledRejections(telemetry);
  // This build's assets in KV before the first request (once per build: a read after that); a
  // store that takes too long is no reason not to serve, and the work goes on meanwhile.
  await Promise.race([app.ready, new Promise((done) => Deno.unrefTimer(setTimeout(done, 30_000)))]);
  return { app, kv, settings, telemetry };
}

let surviving = false;

/**
 * A promise rejected with nobody to handle it (an un-awaited call in a handler, say) would end the
 * process and every request in flight with it: it is logged with a digest and reported instead.
 * Except the server's own death: under `deno serve` nobody awaits `Deno.serve`'s `finished`, so
 * its accept loop failing (no more file descriptors) arrives here, and surviving it would leave a
 * process that answers nothing, or one that exits 0 as if asked to.
 */
function surviveUnhandledRejections(telemetry?: Telemetry): void {
  if (surviving) return;
  surviving = true;
  addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    if (isServeLoopFailure(event.reason)) {
      void serverFailed(`the server failed: ${event.reason}`, telemetry);
    } else {
      logUnhandledRejection(event.reason, telemetry);
    }
  });
}

/**
 * How `Deno.serve`'s `finished` rejects when its accept loop fails (Deno 2.9: any error of the
 * native loop but a shutdown): with `Deno.errors.Http`, thrown by Deno's own code - no frame of
 * ours. `Deno.errors.Http` thrown synchronously to a handler (a WebSocket upgrade, say) carries the
 * handler's frames.
 */
function isServeLoopFailure(reason: unknown): boolean {
  if (!(reason instanceof Deno.errors.Http)) return false;
  const frames = (reason.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
  return frames.length > 0 && frames.every((frame) => frame.includes("ext:deno_http/"));
}

let failed: Promise<never> | undefined;

/**
 * The end of a server that can no longer accept connections: one JSON line (`"fatal": true`),
 * what telemetry still holds sent (bounded), and exit code 1, for a supervisor to restart it.
 */
export function serverFailed(why: string, telemetry?: Telemetry): Promise<never> {
  return failed ??= (async () => {
    log("error", why, { fatal: true });
    await telemetry?.flush(2000); // bounded: an unreachable Sentry must not hold the exit
    Deno.exit(1);
  })();
}
