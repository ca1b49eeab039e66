/**
 * @module
 * The browser gets no server code. The build lists every module it bundled for the browser — from
 * the island runtime (`lib/client/`), the islands, the browser SDK's entry and the action client —
 * in `_build/browser-inputs.json` (esbuild's metafile); none of them may be a server-only module of
 * the framework (`lib/server/`, `lib/render/`, `lib/actions/`, `lib/errors/` but `screen.ts`,
 * `lib/build/`, `lib/cli/`, `lib/dev/`, `lib/testing/`, the server's Sentry modules), a
 * `"use server"` module (the stub takes its place) or what only such a module imports, a `node:`
 * module or a server-only package; and no chunk touches a Deno API. An island may import any npm
 * package of its own: the test app's wall island imports `valibot`, which is no offence.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { isServerModule } from "../lib/build/actions.ts";
import { fixtureBuild } from "./helpers/app.ts";

interface Input {
  imports: { path: string; external?: boolean }[];
}

/** The framework's server-only modules, and packages only a server runs. */
const SERVER_ONLY = [
  /^lib\/server\//,
  /^lib\/render\//,
  /^lib\/actions\//,
  /^lib\/errors\/(?!screen\.ts$)/,
  /^lib\/build\//,
  /^lib\/cli\//,
  /^lib\/dev\//,
  /^lib\/testing(\/|\.ts$)/,
  /^lib\/sentry\/(server|middleware|tunnel|fetch|spotlight|mod|page)\.tsx?$/,
  /^lib\/mod\.ts$/,
  /^node:/,
  /^node_modules\/\.deno\/(@sentry\+deno|esbuild|hono)@/,
];

const { root } = await fixtureBuild();
const BUILD = join(root, "_build");

async function browserInputs(): Promise<Record<string, Input>> {
  return JSON.parse(await Deno.readTextFile(join(BUILD, "browser-inputs.json")));
}

Deno.test("the browser bundle reaches no server-only module", async () => {
  const inputs = await browserInputs();
  const paths = Object.keys(inputs);
  // The list is the real one: the entries, an island's npm package and the modules allowed from
  // server folders are in it.
  for (
    const expected of [
      "lib/client/boot.ts",
      "lib/client/action_client.ts",
      "lib/sentry/browser.ts",
      "islands/Counter.tsx",
      "islands/Wall.tsx",
      "components/Card.tsx",
      "lib/shared/action_wire.ts",
      "lib/errors/screen.ts",
      "lib/runtime.ts",
    ]
  ) {
    assert.ok(paths.includes(expected), `${expected} is bundled`);
  }
  assert.ok(paths.some((path) => path.includes("/valibot@")), "the wall island's valibot");
  const imported = Object.values(inputs).flatMap((input) => input.imports.map((i) => i.path));
  const reached = [...new Set([...paths, ...imported])];
  const offending = reached.filter((path) => SERVER_ONLY.some((pattern) => pattern.test(path)));
  assert.deepEqual(offending, []);
});

Deno.test('no "use server" module, nor what only it imports, reaches the browser', async () => {
  const inputs = await browserInputs();
  const local = Object.keys(inputs).filter((path) =>
    /^(routes|islands|components|lib)\//.test(path)
  );
  const actions = [];
  for (const path of local) {
    if (isServerModule(await Deno.readTextFile(join(root, path)))) actions.push(path);
  }
  assert.deepEqual(actions, []);
  // The wall's action module, and its KV module that only server code imports, are real and
  // imported by the island: the stub took their place.
  const action = await Deno.readTextFile(join(root, "routes/_wall/actions.ts"));
  assert.ok(isServerModule(action));
  assert.match(await Deno.readTextFile(join(root, "islands/Wall.tsx")), /_wall\/actions\.ts/);
  assert.ok(!local.includes("routes/_wall/posts.ts"), "the action's own imports stay out");
});

Deno.test("no browser chunk touches a Deno API", async () => {
  // The newest build's files come first in the history.
  const [files]: string[][] = JSON.parse(await Deno.readTextFile(join(BUILD, "builds.json")));
  const chunks = files.filter((file) => file.endsWith(".js"));
  assert.ok(chunks.length > 3, `chunks to read: ${chunks}`);
  for (const chunk of chunks) {
    const code = await Deno.readTextFile(join(BUILD, "static", chunk));
    assert.doesNotMatch(code, /\bDeno\.[a-z]/, chunk);
  }
});
