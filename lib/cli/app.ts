/**
 * @module
 * The app as the environment describes it, for every entry point: `main.ts` (Deno Deploy,
 * `deno serve`) and `lib/cli/start.ts` (`deno task start`, and the server `deno task dev` runs).
 * Settings that make no sense, and a KV store that cannot be used, stop the start here, with a
 * message naming each and exit code 1.
 * Telemetry is loaded only when configured. The process's one listener for unhandled rejections is
 * installed here too: the app itself touches nothing process-wide.
 */
import { logUnhandledRejection } from "../errors/failure.ts";
import { loadSentry } from "../sentry/mod.ts";
import { withRelease } from "../sentry/config.ts";
import { type App, createApp } from "../server/app.tsx";
import type { Manifest } from "../server/manifest.ts";
import type { Telemetry } from "../server/telemetry.ts";
import { PROJECT_ROOT } from "./root.ts";
import { type Settings, settingsOrExit } from "./settings.ts";
import { storeOrExit } from "./store.ts";

export interface Started {
  app: App;
  settings: Settings;
  telemetry?: Telemetry;
}

export async function appFromEnv(
  manifest: Manifest,
  settings: Settings = settingsOrExit(),
): Promise<Started> {
  const telemetry = settings.sentry
    ? await loadSentry(withRelease(settings.sentry, manifest.buildId))
    : undefined;
  const kv = await storeOrExit(settings.kvPath);
  const app = createApp(manifest, { ...settings.app, root: PROJECT_ROOT, telemetry, kv });
  surviveUnhandledRejections(telemetry);
  return { app, settings, telemetry };
}

let surviving = false;

/**
 * A promise rejected with nobody to handle it (an un-awaited call in a handler, say) would end the
 * process and every request in flight with it: it is logged with a digest and reported instead.
 */
function surviveUnhandledRejections(telemetry?: Telemetry): void {
  if (surviving) return;
  surviving = true;
  addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    logUnhandledRejection(event.reason, telemetry);
  });
}
