/**
 * @module
 * What the serving process holds: a server that had to build as it started (`deno task start` on a
 * fresh clone or after an edit) keeps none of the build's code — no Lightning CSS, no Tailwind
 * native module mapped into it — since it built in a process of its own: V8 never unloads a
 * module, so a build run in the server's process stayed in its memory for as long as it served
 * (50 MB more resident; `docs/performance.md`, "Memory"). Nor, having served pages only, the
 * modules only other work needs: the staleness check (run in a child process), an action call's reader,
 * the page cache at work (no route here caches), `hono/deno`'s SSG and WebSocket helpers,
 * `node:fs`; every module loaded stays in the heap, which V8 grows to a multiple of what it holds.
 * With Sentry on as production runs it (on Deno's OpenTelemetry), the SDK's errors-only bundle: not
 * the one with the SDK's own tracing and the code of all its integrations, nor the packages.
 * Modules are named by URL whether loaded from source or from the server's bundle, whose chunks
 * stand for the modules their source maps list (`helpers/loaded_modules.ts`).
 */
import assert from "node:assert/strict";
import { startSentryReceiver } from "shell/testing";
import { builtFixture } from "../helpers/built_copy.ts";
import { INSPECT_ANY_PORT, inspectorPort, loadedModules } from "../helpers/loaded_modules.ts";
import { startOtlpReceiver, tracedEnv } from "../helpers/otlp_receiver.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";

/** The shared objects mapped into a process (`/proc/<pid>/maps`), by file name. */
async function mappedFiles(pid: number): Promise<Set<string>> {
  const maps = await Deno.readTextFile(`/proc/${pid}/maps`);
  return new Set(maps.split("\n").flatMap((line) => /\s(\/\S+)$/.exec(line)?.[1] ?? []));
}

Deno.test("a server that builds as it starts holds none of the build's native modules", async () => {
  // A copy has no `_build/`: the server builds first.
  await using project = await copyProject();
  await using server = await startServer({}, { root: project.root });
  const page = await server.fetch("/");
  assert.equal(page.status, 200);
  await page.body?.cancel();
  await Deno.stat(`${project.root}/_build/manifest.gen.ts`); // it did build

  const native = [...await mappedFiles(server.pid)].filter((file) => file.endsWith(".node"));
  assert.deepEqual(native, [], "no Node-API module (lightningcss, @tailwindcss/oxide) mapped");
  // …and the build's processes are gone too (esbuild's service).
  const children = await Deno.readTextFile(`/proc/${server.pid}/task/${server.pid}/children`);
  assert.equal(children.trim(), "");
});

/** What a server that serves pages never needs, each with where it went. */
const NOT_LOADED: [RegExp, string][] = [
  [/\/lib\/build\//, "the staleness check runs in a child process (cli/stale_build.ts)"],
  [/\/lib\/actions\/(read_call|decode|form_body|stale)\.ts$/, "imported at the first action call"],
  [/\/lib\/cache\/active\.ts$/, "imported only when a route exports `cache`"],
  [/\/hono\/dist\/helper\/(ssg|websocket)\//, "hono/deno's serveStatic brings them: not used"],
  [/^(node:fs|ext:deno_node\/fs\.ts)$/, "Deno's own file calls (server/static.ts, sentry/sdk.ts)"],
];

/** `NOT_LOADED`'s modules found in `scripts`, each with where it went. */
const heldOf = (scripts: string[], notLoaded: [RegExp, string][]) =>
  notLoaded.flatMap(([pattern, why]) =>
    scripts.filter((url) => pattern.test(url)).map((url) => `${url}: ${why}`)
  );

Deno.test("a server that served pages holds none of the modules only other work needs", async () => {
  // Built already, as after `deno task build`: the server only checks that its build is current.
  await using server = await startServer({}, {
    root: await builtFixture(),
    args: () => ["run", "-A", INSPECT_ANY_PORT, "lib/cli/start.ts"],
  });
  for (const path of ["/", "/list", "/no-such-page"]) {
    await (await server.fetch(path)).body?.cancel();
  }

  const scripts = await loadedModules(inspectorPort(server.stderr));
  assert.ok(scripts.some((url) => url.endsWith("/lib/server/app.tsx")), "the app is loaded");
  const held = heldOf(scripts, NOT_LOADED);
  assert.deepEqual(held, [], "each module loaded stays in the heap for as long as the server runs");
});

Deno.test("a Sentry-on server on Deno's OpenTelemetry holds only the SDK's errors-only bundle", async () => {
  await using receiver = startSentryReceiver();
  await using otlp = startOtlpReceiver();
  // The server's process as the launcher starts it (the bundle's entry): Deno's OpenTelemetry on,
  // Sentry for errors.
  await using server = await startServer(tracedEnv(otlp, receiver.dsn), {
    root: await builtFixture(),
    args: () => ["run", "-A", INSPECT_ANY_PORT, "_build/server/serve.js"],
  });
  for (const path of ["/", "/list"]) await (await server.fetch(path)).body?.cancel();

  const scripts = await loadedModules(inspectorPort(server.stderr));
  const sdk = scripts.filter((url) => /\/_build\/server-sdk\/|\/@sentry\//.test(url));
  assert.deepEqual(sdk.map((url) => url.replace(/^.*\/_build\//, "_build/")), [
    "_build/server-sdk/sdk.js",
  ]);
  assert.ok(scripts.some((url) => url.endsWith("/lib/sentry/on_otel.ts")), "Sentry is on");
  assert.deepEqual(
    heldOf(scripts, [
      ...NOT_LOADED,
      [/\/lib\/sentry\/sdk_tracing\.ts$/, "only where the SDK traces requests itself"],
      [/\/lib\/otel\/env\.ts$/, "the launcher's; the sampler's ratio is read in otel/detect.ts"],
    ]),
    [],
  );
});
