/**
 * `deno task start` serves from the server's bundle (`_build/server/`, `lib/build/server_bundle.ts`)
 * once the build is current: no module of ours from source but the few that check the build
 * (`cli/load_built.ts`); a page failure has the digest and the JSON line the server from source
 * gives, Deno mapping the bundle's stacks through its `.js.map` files; a bundle older than the
 * sources, or none, is built again before it is served.
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import {
  INSPECT_ANY_PORT,
  inspectorPort,
  loadedModules,
  loadedScripts,
} from "../helpers/loaded_modules.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

/** What runs from source before the bundle is loaded: the entry and the build's check. */
const BOOT = ["launch.ts", "start.ts", "node_env.ts", "load_built.ts", "root.ts", "stale_build.ts"]
  .map((file) => `lib/cli/${file}`);

const ourSource = (scripts: string[], root: string) =>
  scripts.filter((url) => url.startsWith(`file://${root}/`) && /\.tsx?$/.test(url))
    .map((url) => url.slice(`file://${root}/`.length));

Deno.test("deno task start serves from the bundle: no module of ours from source but the check", async () => {
  const root = await builtCopy("fixture", {});
  await using server = await startServer({}, {
    root,
    args: () => ["run", "-A", INSPECT_ANY_PORT, "lib/cli/launch.ts"],
  });
  for (const path of ["/", "/list", "/no-such-page"]) {
    await (await server.fetch(path)).body?.cancel();
  }
  const scripts = await loadedScripts(inspectorPort(server.stderr));
  assert.deepEqual(ourSource(scripts, root).filter((file) => !BOOT.includes(file)), []);
  assert.ok(scripts.some((url) => url.endsWith("/_build/server/launcher.js")));
  const modules = await loadedModules(inspectorPort(server.stderr));
  assert.ok(modules.includes(`file://${root}/lib/server/app.tsx`), "the app, from the bundle");
});

const FAILING = {
  "routes/fails.tsx": `export default function Fails(): never {
  throw new Error("a page that fails");
}
`,
};

async function failureOf(server: TestServer) {
  const page = await server.fetch("/fails");
  assert.equal(page.status, 500);
  const line = await server.waitForLog((line) => line.level === "error");
  assert.match(await page.text(), new RegExp(`Digest: <code>${line.digest}</code>`));
  return { digest: line.digest, line };
}

Deno.test("a page failure from the bundle has the source's digest and JSON line", async () => {
  const root = await builtCopy("failing-page", FAILING);
  let fromSource;
  {
    // The server from source, as `deno serve main.ts` and `deno task dev` run it.
    await using server = await startServer({}, { root, script: "lib/cli/serve.ts" });
    fromSource = await failureOf(server);
  }
  await using server = await startServer({}, { root, script: "lib/cli/start.ts" });
  const bundled = await failureOf(server);
  assert.ok(fromSource.digest);
  assert.equal(bundled.digest, fromSource.digest);
  const error = bundled.line.error as { stack: string };
  assert.match(error.stack, /routes\/fails\.tsx:2:9/, "the stack is mapped to the source");
  const comparable = (
    { trace_id: _, time: __, request_id: ___, ...rest }: Record<string, unknown>,
  ) => rest;
  assert.deepEqual(comparable(bundled.line), comparable(fromSource.line));
});

Deno.test("a bundle older than the sources, or none, is built again before it serves", async () => {
  await using project = await copyProject({
    from: await builtCopy("fixture", {}),
    withBuild: true,
  });
  const { root } = project;
  await Deno.remove(`${root}/_build/server`, { recursive: true }); // a build from before bundles
  {
    await using server = await startServer({}, { root, script: "lib/cli/launch.ts" });
    await (await server.fetch("/")).body?.cancel();
    await Deno.stat(`${root}/_build/server/serve.js`);
  }
  const page = await Deno.readTextFile(`${root}/routes/list.tsx`);
  await project.write(
    "routes/list.tsx",
    page.replace("export default", "// edited\nexport default"),
  );
  await project.write("routes/fresh.tsx", "export default () => <p>added after the build</p>;\n");
  await using server = await startServer({}, { root, script: "lib/cli/launch.ts" });
  const added = await server.fetch("/fresh");
  assert.equal(added.status, 200);
  assert.match(await added.text(), /added after the build/);
});
