/**
 * @module
 * `deno task dev`: builds (unminified), runs the server in a child process and, on every change
 * under `routes/ islands/ lib/ static/`, rebuilds and restarts it; open pages then reload by
 * themselves (`lib/dev/reload.ts`). A failed build or an exited server is printed and shown in
 * the browser (`lib/dev/error_page.ts`) until a change brings the app back: this loop outlives both.
 */
import * as esbuild from "esbuild";
import { join, relative, sep } from "node:path";
import { build } from "../build/mod.ts";
import { serveErrorPage } from "../dev/error_page.ts";
import { spawnServer } from "../dev/server_process.ts";
import { watch } from "../dev/watch.ts";
import { PROJECT_ROOT as root } from "./root.ts";
import { settingsOrExit } from "./settings.ts";

const WATCHED = ["routes", "islands", "lib", "static"];
const { hostname, port } = settingsOrExit();
const address = { hostname, port };

interface Running {
  stop(): Promise<void>;
}

/** What answers on the app's address: its server, the error page, or nothing yet. */
let current: Running | undefined;

/** Whether `_build/` holds the current sources' build: a failed one must run again. */
let built = false;

/** Restarts run one at a time, in order. */
let queue = Promise.resolve();
function serially(task: () => Promise<void>) {
  queue = queue.then(task).catch((error) => console.error("dev:", error));
}

async function restart(rebuild: boolean) {
  if (rebuild || !built) {
    const started = performance.now();
    try {
      await build({ root, dev: true });
      built = true;
      console.log(`dev: built in ${Math.round(performance.now() - started)} ms`);
    } catch (error) {
      built = false;
      const details = await describeBuildError(error);
      console.error(`dev: build failed\n${details}`);
      return replace(() => errorPage("Build failed", details));
    }
  }
  await replace(startServer);
}

async function replace(next: () => Running | undefined) {
  await current?.stop();
  current = next();
}

function startServer(): Running {
  const server = spawnServer(root, (code, stderr) =>
    serially(async () => {
      if (current !== server) return;
      console.error(`dev: the server exited with code ${code}; save a change to restart it`);
      await replace(() => errorPage(`The server exited with code ${code}`, stderr));
    }));
  return server;
}

function errorPage(title: string, details: string): Running | undefined {
  try {
    return serveErrorPage(address, title, details);
  } catch (error) {
    console.error("dev: could not show the error page:", error);
  }
}

/** esbuild's messages with their code frames; anything else (a misnamed route) by its message. */
async function describeBuildError(error: unknown): Promise<string> {
  const messages = (error as Partial<esbuild.BuildFailure>)?.errors;
  if (!messages?.length) {
    return error instanceof Error ? error.message : String(error);
  }
  return (await esbuild.formatMessages(messages, { kind: "error" })).join("");
}

serially(() => restart(true));

const watcher = watch(WATCHED.map((dir) => join(root, dir)), (paths) => {
  const files = paths.map((path) => relative(root, path));
  console.log(`dev: changed ${files.join(", ")}`);
  // static/ is served as it is: the server needs a restart to list the files, not a build.
  serially(() => restart(!files.every((file) => file.startsWith(`static${sep}`))));
});

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () =>
    serially(async () => {
      watcher[Symbol.dispose]();
      await current?.stop();
      await esbuild.stop();
      Deno.exit(0);
    }));
}
