/**
 * Source maps for Sentry: the production build gives every chunk and its map one debug ID (and the
 * chunk the line that registers it); `deno task sentry:sourcemaps` uploads them with
 * `sentry-cli` — against a stand-in for Sentry's API on 127.0.0.1 — or, without credentials, says
 * which are missing and fails; `SERVE_SOURCE_MAPS=0` stops serving the maps.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { builtFixture } from "../helpers/built_copy.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { startSentryApi } from "../helpers/sentry_api.ts";
import { startServer } from "../helpers/server.ts";

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

async function task(root: string, name: string, env: Record<string, string>) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["task", name],
    cwd: root,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code, output: text.decode(stdout) + text.decode(stderr) };
}

Deno.test("source maps for Sentry", async (t) => {
  // The project's production build, as `deno task build` left it (`deno task test` runs it first).
  await using project = await copyProject({ from: await builtFixture(), withBuild: true });
  const assets = join(project.root, "_build/static");
  const [files]: string[][] = JSON.parse(
    await Deno.readTextFile(join(project.root, "_build/builds.json")),
  );
  const scripts = files.filter((file) => file.endsWith(".js"));
  const debugIds = new Map<string, string>();

  await t.step("every chunk and its map share a debug ID; the chunk registers it", async () => {
    assert.ok(scripts.length >= 5, `${scripts}`);
    for (const script of scripts) {
      const code = await Deno.readTextFile(join(assets, script));
      const id = code.match(new RegExp(`\\n//# debugId=(${UUID})\\s*$`))?.[1];
      assert.ok(id, `${script} ends with //# debugId=`);
      assert.ok(code.startsWith(`(globalThis._sentryDebugIds??={})[new Error().stack]="${id}";\n`));
      const map = JSON.parse(await Deno.readTextFile(join(assets, `${script}.map`)));
      assert.equal(map.debugId, id, `${script}.map`);
      // What is served is what the map maps: the compressed copies hold the ID too.
      const gz = await Deno.readFile(join(assets, `${script}.gz`));
      const unzipped = new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"));
      assert.equal(await new Response(unzipped).text(), code, `${script}.gz`);
      debugIds.set(script, id);
    }
    assert.equal(new Set(debugIds.values()).size, scripts.length, "one ID per chunk");
  });

  await t.step("the upload says which credentials are missing, and fails", async () => {
    const { code, output } = await task(project.root, "sentry:sourcemaps", { SENTRY_ORG: "acme" });
    assert.equal(code, 1);
    assert.match(output, /SENTRY_AUTH_TOKEN, SENTRY_PROJECT are not set/);
  });

  await t.step("the upload sends every chunk and map, by debug ID", async () => {
    await using api = startSentryApi();
    const { code, output } = await task(project.root, "sentry:sourcemaps", {
      SENTRY_URL: api.url,
      SENTRY_AUTH_TOKEN: "sntrys_test",
      SENTRY_ORG: "acme",
      SENTRY_PROJECT: "web",
    });
    assert.equal(code, 0, output);
    assert.ok(api.requests.every((r) => r.authorization === "Bearer sntrys_test"));
    assert.ok(api.requests.some((r) => r.line === "POST /api/0/organizations/acme/chunk-upload/"));
    assert.deepEqual(api.projects, ["web"]);
    const manifest = Object.values(await api.manifest());
    for (const [script, id] of debugIds) {
      const entries = manifest.filter((file) =>
        file.url === `~/${script}` || file.url === `~/${script}.map`
      );
      assert.deepEqual(
        entries.map((file) => [file.type, file.headers["debug-id"]]).sort(),
        [["minified_source", id], ["source_map", id]],
        script,
      );
    }
  });

  await t.step("SERVE_SOURCE_MAPS=0: the chunks are served, their maps are not", async () => {
    const [script] = scripts;
    for (const [serve, status] of [["1", 200], ["0", 404]] as const) {
      await using server = await startServer({ SERVE_SOURCE_MAPS: serve }, { root: project.root });
      const js = await server.fetch(`/_app/${script}`);
      await js.body?.cancel();
      assert.equal(js.status, 200);
      const map = await server.fetch(`/_app/${script}.map`);
      await map.body?.cancel();
      assert.equal(map.status, status, `SERVE_SOURCE_MAPS=${serve}`);
    }
  });
});
