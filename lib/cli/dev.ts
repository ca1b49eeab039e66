/**
 * @module
 * `deno task dev`: the dev server on HOSTNAME:PORT, in front of the app's server, until SIGINT or
 * SIGTERM (`lib/dev/session.ts`). Islands update in place on save, keeping their state; other
 * edits restart the app's server and reload the open pages; errors show in the browser.
 */
import * as esbuild from "esbuild";
import { startDev } from "../dev/session.ts";
import { hostsAnswered } from "../server/options.ts";
import { PROJECT_ROOT as root } from "./root.ts";
import { frameworkSettingsOrExit } from "./declared.ts";

const { hostname, port, app } = await frameworkSettingsOrExit();
const hosts = hostsAnswered(app.origins, app.allowedHosts);
const dev = await startDev({ root, hostname, port, hosts }).catch((error) => {
  // Said plainly, and a non-zero exit (a port in use, say); the app's servers go with this one.
  console.error(error instanceof Error ? error.message : error);
  Deno.exit(1);
});

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, async () => {
    if (stopping) return;
    stopping = true;
    await dev.stop();
    await esbuild.stop();
    Deno.exit(0);
  });
}
