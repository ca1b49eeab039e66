/**
 * For entry points, tests and plugins: `import { ... } from "shell/server"`. `createApp(manifest,
 * options)` makes the app from what `deno task build` wrote; `AppOptions` are its settings,
 * `Telemetry` the seam a plugin (Sentry's) implements, and `Manifest` the build's shape.
 *
 * @example
 * ```ts
 * // tests/about_test.ts
 * import assert from "node:assert/strict";
 * import { createApp } from "shell/server";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * Deno.test("the about page renders", async () => {
 *   const app = createApp(manifest, { root: Deno.cwd() });
 *   const res = await app.request("/about");
 *   assert.equal(res.status, 200);
 *   await res.body?.cancel();
 * });
 * ```
 * @see docs/testing.md
 * @module
 */
export { type App, createApp } from "./server/app.tsx";
export type { AppOptions } from "./server/options.ts";
export { SettingsError } from "./settings/read.ts";
export type { PageCacheOptions } from "./cache/page_cache.ts";
export type { FailureLinks, JobRun, Telemetry, TraceIds } from "./server/telemetry.ts";
export type { HonoApp } from "./server/types.ts";
export type {
  ActionEntry,
  ActionFunction,
  Assets,
  Chunk,
  ComponentModule,
  ErrorPageEntry,
  Manifest,
  ManifestActions,
  ManifestFolder,
  ManifestRoute,
  ManifestStyles,
  MiddlewareModule,
  RouteModule,
} from "./server/manifest.ts";
