/**
 * @module
 * The browser gets no server code: every module the build bundled for the browser — reached from
 * the island runtime (`lib/client/`), the islands, the browser SDK's entry and the action client,
 * as esbuild's metafile lists them (`_build/browser-inputs.json`, written by each build) — is
 * browser-safe. Nothing under `lib/server/`, `lib/render/`, `lib/actions/`,
 * `lib/errors/` (but `screen.ts`), `lib/build/`, `lib/cli/`, `lib/dev/`, nor the server's Sentry
 * modules; no `node:` module, no server-only package; and no chunk touches a Deno API.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { PROJECT_ROOT } from "./helpers/project_copy.ts";

interface Input {
  imports: { path: string; external?: boolean }[];
}

const SERVER_ONLY = [
  /^lib\/server\//,
  /^lib\/render\//,
  /^lib\/actions\//,
  /^lib\/errors\/(?!screen\.ts$)/,
  /^lib\/build\//,
  /^lib\/cli\//,
  /^lib\/dev\//,
  /^lib\/sentry\/(server|middleware|tunnel|fetch|spotlight|mod|page)\.tsx?$/,
  /^node:/,
  /^node_modules\/\.deno\/(@sentry\+deno|esbuild|hono)@/,
];

const BUILD = join(PROJECT_ROOT, "_build");

async function browserInputs(): Promise<Record<string, Input>> {
  return JSON.parse(await Deno.readTextFile(join(BUILD, "browser-inputs.json")));
}

Deno.test("the browser bundle reaches no server-only module", async () => {
  const inputs = await browserInputs();
  const paths = Object.keys(inputs);
  // The list is the real one: the entries and the modules allowed from server folders are in it.
  for (
    const expected of [
      "lib/client/boot.ts",
      "lib/client/action_client.ts",
      "lib/sentry/browser.ts",
      "islands/Counter.tsx",
      "lib/shared/action_wire.ts",
      "lib/errors/screen.ts",
      "lib/runtime.ts",
    ]
  ) {
    assert.ok(paths.includes(expected), `${expected} is bundled`);
  }
  const imported = Object.values(inputs).flatMap((input) => input.imports.map((i) => i.path));
  const offending = [...new Set([...paths, ...imported])]
    .filter((path) => SERVER_ONLY.some((pattern) => pattern.test(path)));
  assert.deepEqual(offending, []);
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
