/**
 * @module
 * What `deno task start` and `lib/cli/start.ts` do first: build when the sources changed since the
 * last build of this mode (checked and built in child processes: nothing of either stays with the
 * server), then load the entry point. In production that is the server's bundle
 * (`_build/server/`, `build/server_bundle.ts`), so that no module of ours but this one, the check's
 * and `root.ts` is loaded from source: Deno keeps each in the heap with its inline source map, and
 * V8 sizes the old generation at a multiple of that (`docs/performance.md`, "a bundled server").
 * Under `deno task dev` the entry point runs from source: the dev server rebuilds and reloads
 * modules one by one (`DEV_FRONT_TOKEN`: it has built already).
 */
import { PROJECT_ROOT } from "./root.ts";
import { isStaleApart } from "./stale_build.ts";

/** Builds if need be, then loads `entry` (`serve`, `launcher`): from the bundle in production. */
export async function loadBuilt(entry: "serve" | "launcher"): Promise<void> {
  const dev = Deno.env.get("NODE_ENV") === "development";
  if (!Deno.env.get("DEV_FRONT_TOKEN") && await isStaleApart(PROJECT_ROOT, dev)) {
    await (await import("./build_or_exit.ts")).buildApartOrExit(dev);
  }
  await import(
    dev
      ? new URL(`./${entry}.ts`, import.meta.url).href
      : new URL(`../../_build/server/${entry}.js`, import.meta.url).href
  );
}
