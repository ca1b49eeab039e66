/**
 * @module
 * `deno task dev`'s loop. The dev server (`front.ts`) listens on the app's address at once; the
 * browser build (`build/dev/`) and the app's server follow. Then, for each settled change in the
 * project that is a source - under `routes/ islands/ lib/ static/`, `deno.json` or the lockfile,
 * or a module the last build's graphs reached, in any folder (`components/`, `build/graph.ts`):
 *  - a source the browser build bundles and no page renders on the server but through an island
 *    (an island, a component only islands import): rebuilt, and the open pages swap the changed
 *    islands in place, state kept (`updates.ts`, the dev client); the app's server restarts at the
 *    next request, so that its next page renders the new code;
 *  - any other source (a route, a layout, a component a route renders, server code, the config):
 *    rebuilt, the server restarts, and the pages reload once it listens;
 *  - a stylesheet the app imports (or one it `@import`s): rebuilt, the pages swap it for its new
 *    URL, and the server restarts at the next request - unless a page's list of stylesheets or a
 *    CSS module's class names changed: then the server restarts and the pages reload;
 *  - a stylesheet in `static/`: the pages swap it; another file in `static/`: the server restarts
 *    (it lists the files as it starts) and the pages reload.
 * A browser build that fails shows over the open pages, which keep their state; a server that
 * cannot run is replaced by the error page. Either way the next good save brings the app back.
 */
import * as esbuild from "esbuild";
import { join, relative, sep } from "node:path";
import { buildDir, CONFIG_FILES, SOURCE_FOLDERS } from "../build/fingerprint.ts";
import { type DevBuild, devBuilder } from "../build/dev/mod.ts";
import { emptyGraph, isStylesheet } from "../build/graph.ts";
import { isBuildFailure, lineOf } from "../build/problem.ts";
import { backends as backendsOf } from "./backend.ts";
import { devEvents } from "./events.ts";
import { devFront } from "./front.ts";
import { stackMapper } from "./stack.ts";
import { stylesheets } from "./stylesheets.ts";
import { planUpdate } from "./updates.ts";
import { watchProject } from "./watch.ts";

/** Never sources: the build's output, packages, the KV store, git's. */
const IGNORED = new Set(["_build", "node_modules", ".data", ".git"]);
const ASSET_DIR = `${buildDir(true)}/static`;
/** How long requests in flight may hold the dev server's exit. */
const STOP_MS = 2_000;

export interface DevOptions {
  root: string;
  hostname: string;
  port: number;
  /** The hosts of `APP_ORIGIN` and `ALLOWED_HOSTS` (`hosts.ts`). */
  hosts?: string[];
}

export interface DevServer {
  stop(): Promise<void>;
}

export async function startDev(
  { root, hostname, port, hosts }: DevOptions,
): Promise<DevServer> {
  const session = crypto.randomUUID();
  const token = crypto.randomUUID();
  /** The version of the code the pages should show: one more with every change published. */
  let version = 0;
  /** The browser build's error, while it fails: the pages show it over themselves. */
  let buildError: string | undefined;
  /** Server code changed while the browser build failed: the next good one restarts it. */
  let serverStale = false;
  /** The app cannot run: the pages show the error page. */
  let failing = false;
  /** Swaps of `static/` stylesheets so far (`Hello.styles`). */
  let styleSwaps = 0;
  const styles = stylesheets(root);

  const events = devEvents(() => {
    // A page is open: get ready for its first save, now that it has loaded.
    builder.prepare();
    return { session, version, styles: styleSwaps, error: buildError };
  });
  const backends = backendsOf(root, token, (code, stderr) => {
    console.error(`dev: the server exited with code ${code}; save a change to restart it`);
    fail(`The server exited with code ${code}`, stderr);
  });
  const builder = await devBuilder(root);
  const server = listen(
    {
      hostname,
      port,
      onListen: ({ hostname, port }) => console.log(`Listening on http://${hostname}:${port}/`),
    },
    devFront({
      session,
      token,
      events,
      backends,
      asset: builder.file,
      mapStack: stackMapper(root, ASSET_DIR, builder.files),
      stale: styles.stale,
      styleSwaps: () => styleSwaps,
      hosts,
    }),
  );

  const fail = (title: string, details: string) => {
    failing = true;
    backends.fail(++version, title, details);
    events.send("reload", { version, why: title });
  };

  /** A new server for the current version; the pages reload once it listens, if `why`. */
  const restart = (why?: string) => {
    const at = version;
    const started = performance.now();
    styles.serverStarting();
    return backends.restart(at).then((backend) => {
      if (at !== version) return; // a later change took over
      failing = !("origin" in backend);
      if (failing) console.error("dev: the server could not start");
      else console.log(`dev: server ready in ${Math.round(performance.now() - started)} ms`);
      if (why || failing) events.send("reload", { version: at, why: why ?? "the server failed" });
    }).catch((error) => console.error("dev: could not start the server:", error));
  };

  let last: DevBuild | undefined;
  /** `deno.json` as the last build that rewrote it left it: its own save is no change. */
  let ownConfig: string | undefined;
  /** Every URL each stylesheet the app imports had in the session: a page may link any. */
  const styleUrls = new Map<string, Set<string>>();
  /** Each earlier URL of a stylesheet `next` rebuilt -> its new one. */
  const movedStyles = (next: DevBuild): Record<string, string> => {
    const moved: Record<string, string> = {};
    for (const [sheet, url] of next.styles) {
      const urls = styleUrls.get(sheet) ?? new Set();
      if (!urls.has(url)) { for (const earlier of urls) moved[earlier] = url; }
      styleUrls.set(sheet, urls.add(url));
    }
    return moved;
  };
  const build = async (stylesOnly = false): Promise<DevBuild | undefined> => {
    const started = performance.now();
    try {
      const next = await builder.build(stylesOnly);
      console.log(`dev: built in ${Math.round(performance.now() - started)} ms`);
      if (next.config !== undefined) {
        // The spare server read the import map as it started: it would miss the new entries.
        ownConfig = next.config;
        backends.discardSpare();
      }
      return next;
    } catch (error) {
      const details = await describeBuildError(error);
      // A line per mistake here; the code frames go to the browser.
      for (const line of summaryOf(error)) console.error(`dev: Build failed: ${line}`);
      // Over the open pages, while they have something to show under it.
      if (last && !failing && isBuildFailure(error)) {
        buildError = details;
        events.send("build-error", { text: details });
      } else fail("Build failed", details);
    }
  };

  const onChange = async (changed: string[]) => {
    const { server, pages } = last?.graph ?? emptyGraph();
    const known = new Set([...server, ...last?.inputs ?? []]);
    const files = changed.filter((file) =>
      (isConvention(file) || known.has(file)) && !(file === "deno.json" && isOwnConfig())
    );
    if (files.length === 0) return;
    console.log(`dev: changed ${files.join(", ")}`);
    const rendered = new Set(pages);
    const built = files.filter((file) => !file.startsWith("static/"));
    // The app's stylesheets change no module: rebuilt, they are swapped in the open pages.
    const code = built.filter((file) => !isStylesheet(file));
    const hrefs = styles.swappable(files);
    // Another change to `static/` changes what the server lists as it starts.
    const assets = files.filter((file) =>
      file.startsWith("static/") && !hrefs.includes(file.slice("static".length))
    );
    const swap = (moved: Record<string, string> = {}, at?: number) => {
      styles.swapped(hrefs);
      if (hrefs.length > 0) styleSwaps++;
      events.send("css", { hrefs, moved, version: at, styles: styleSwaps });
    };
    if (built.length === 0 && assets.length === 0) return swap();
    const previous = last;
    if (built.length > 0) {
      const next = await build(code.length === 0);
      if (!next) {
        serverStale ||= code.some((file) => !previous?.inputs.has(file) || rendered.has(file));
        return;
      }
      last = next;
      if (buildError !== undefined) {
        buildError = undefined;
        events.send("built", {});
      }
    }
    version++;
    const moved = last && last !== previous ? movedStyles(last) : {};
    // A stylesheet added, removed or moved in a page, or a class name changed: pages change.
    const restyled = last?.styleShape !== previous?.styleShape;
    const browserOnly = !failing && !serverStale && assets.length === 0 && !restyled &&
      code.every((file) =>
        (last!.inputs.has(file) || previous?.inputs.has(file)) && !rendered.has(file)
      );
    const plan = code.length > 0 && previous && browserOnly
      ? planUpdate(previous.metafile, last!.metafile, last!.islands, code, ASSET_DIR)
      : undefined;
    if (!browserOnly || (plan && "reload" in plan)) {
      serverStale = false;
      return restart(plan && "reload" in plan ? plan.reload : `${files.join(", ")} changed`);
    }
    // The pages update now; the server catches up behind them, for the next request.
    backends.restartOnRequest(version);
    // The stylesheets first: an island's new class names find their rules.
    if (hrefs.length > 0 || Object.keys(moved).length > 0) swap(moved, version);
    if (plan) events.send("update", { version, ...plan.update });
  };

  /** Whether `deno.json` is as the last build that rewrote it left it. */
  const isOwnConfig = () => {
    const own = ownConfig !== undefined && readTextOr(join(root, "deno.json")) === ownConfig;
    ownConfig = undefined;
    return own;
  };

  // Changes are handled one at a time, in order; the first start is the first of them.
  let queue = (async () => {
    last = await build();
    if (last) movedStyles(last);
    if (last) await restart();
    console.log(`dev: ready, ${Math.round(performance.now())} ms after start`);
  })();
  const watcher = watchProject(root, IGNORED, (paths) => {
    const files = paths.map((path) => relative(root, path).split(sep).join("/"));
    // The spare server has loaded the framework, and read the config, as they were: dropped as
    // soon as they change, not at this change's turn - a restart for an earlier change, starting
    // meanwhile, would take it and serve the framework from before this save.
    if (files.some((file) => file.startsWith("lib/") || CONFIG_FILES.includes(file))) {
      backends.discardSpare();
    }
    queue = queue.then(() => onChange(files)).catch((error) => console.error("dev:", error));
  });

  return {
    async stop() {
      watcher[Symbol.dispose]();
      events.close();
      await queue;
      // The app's server first: the requests it still answers (a stream, say) end with it.
      await backends.stop();
      await Promise.all([
        Promise.race([server.shutdown(), new Promise((done) => setTimeout(done, STOP_MS))]),
        builder.dispose(),
      ]);
    },
  };
}

/**
 * In a folder the build scans or the server serves, or the config: a source whatever imports it.
 */
function isConvention(file: string): boolean {
  return CONFIG_FILES.includes(file) ||
    SOURCE_FOLDERS.some((folder) => file.startsWith(`${folder}/`));
}

/** `file:line:column: text` for each of esbuild's errors; anything else by its message's lines. */
function summaryOf(error: unknown): string[] {
  if (isBuildFailure(error) && error.errors.length > 0) return error.errors.map(lineOf);
  return (error instanceof Error ? error.message : String(error)).split("\n");
}

/** esbuild's messages with their code frames; anything else (a misnamed island) by its message. */
async function describeBuildError(error: unknown): Promise<string> {
  if (isBuildFailure(error) && error.errors.length > 0) {
    return (await esbuild.formatMessages(error.errors, { kind: "error", color: false })).join("");
  }
  return error instanceof Error ? error.message : String(error);
}

function readTextOr(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
}

/** `Deno.serve`, failing with a message that names the address. */
function listen(options: Deno.ServeTcpOptions, handler: Deno.ServeHandler): Deno.HttpServer {
  try {
    return Deno.serve(options, handler);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`Cannot listen on ${options.hostname}:${options.port}: ${why}`);
  }
}
