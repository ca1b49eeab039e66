/**
 * @module
 * An app made from a manifest older than the project says so (`lib/server/build_sources.ts`): a
 * `_middleware.ts` added after the build is in no manifest, so without a word its guard did not run
 * - in a product's in-process tests, and under `deno serve main.ts` after a pull without a build.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { filesBelow } from "../lib/build/files.ts";
import { createApp } from "../lib/server.ts";
import { modulesAddedSince, sourceModules } from "../lib/server/build_sources.ts";
import { captureLogs } from "../lib/testing.ts";
import { memoryManifest } from "./helpers/app.ts";
import { FIXTURE_ROOT, PROJECT_ROOT } from "./helpers/project_copy.ts";

Deno.test("a module added under routes/ after the build is warned of, once; none is not", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(root, "routes/desk"), { recursive: true });
    await Deno.writeTextFile(join(root, "routes/index.tsx"), "export default () => null;\n");
    await Deno.writeTextFile(join(root, "routes/desk/index.tsx"), "export default () => null;\n");
    await Deno.writeTextFile(join(root, "routes/app.css"), "body {}\n");
    const manifest = {
      ...memoryManifest({
        routes: { "index.tsx": { default: () => null }, "desk/index.tsx": { default: () => null } },
      }),
      buildId: "older",
      sources: ["routes/desk/index.tsx", "routes/index.tsx"],
    };
    using logs = captureLogs();
    createApp(manifest, { root });
    assert.equal(logs.lines.length, 0, "the build has every module: nothing to say");

    await Deno.writeTextFile(
      join(root, "routes/desk/_middleware.ts"),
      "export const handler = [];\n",
    );
    createApp(manifest, { root });
    createApp(manifest, { root }); // once per process for a build
    assert.equal(logs.lines.length, 1, JSON.stringify(logs.lines));
    const [line] = logs.lines;
    assert.equal(line.level, "warn");
    assert.deepEqual(line.added, ["routes/desk/_middleware.ts"]);
    assert.match(
      String(line.msg),
      /^The build is older than the project: routes\/desk\/_middleware\.ts came after it.*Run deno task build/,
    );

    // A manifest without the list (made by hand, in memory) and the dev loop are not asked.
    createApp({ ...manifest, buildId: "newer", sources: undefined }, { root });
    createApp({ ...manifest, buildId: "dev" }, { root, dev: true });
    assert.equal(logs.lines.length, 1);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the start lists routes/ and islands/ as the build does: symlinks, dotfiles, nesting", async () => {
  // The build lists with node:fs' recursive readdir (build/files.ts), the start with its own walk
  // (build_sources.ts): a file one lists and the other not is warned of at every start, or never.
  const root = await Deno.makeTempDir();
  try {
    const files = [
      "routes/index.tsx",
      "routes/.well-known/security.ts",
      "routes/.hidden.ts",
      "routes/a/(group)/b/[id].tsx",
      "routes/a/_middleware.ts",
      "routes/a/notes.md",
      "elsewhere/page.tsx",
      "elsewhere/deep/more.tsx",
      "islands/Counter.tsx",
      "islands/parts/Part.tsx",
    ];
    for (const file of files) {
      await Deno.mkdir(join(root, file, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, file), "export default () => null;\n");
    }
    await Deno.mkdir(join(root, "routes/empty"));
    await Deno.symlink("../elsewhere/page.tsx", join(root, "routes/linked.tsx"));
    await Deno.symlink("../../elsewhere", join(root, "routes/a/linked"));
    await Deno.symlink("../nowhere.tsx", join(root, "routes/broken.tsx"));
    await Deno.symlink("../elsewhere", join(root, "islands/linked"));
    const built = async (at: string) =>
      sourceModules(await filesBelow(join(at, "routes")), await filesBelow(join(at, "islands")));
    const listed = await built(root);
    assert.deepEqual(listed, [
      "islands/Counter.tsx",
      "islands/parts/Part.tsx",
      "routes/.hidden.ts",
      "routes/.well-known/security.ts",
      "routes/a/(group)/b/[id].tsx",
      "routes/a/_middleware.ts",
      "routes/index.tsx",
    ]);
    assert.deepEqual(modulesAddedSince(root, []), listed);
    // routes/ itself a link: both read through it.
    const linked = await Deno.makeTempDir();
    try {
      await Deno.symlink(join(root, "routes"), join(linked, "routes"));
      assert.deepEqual(modulesAddedSince(linked, []), await built(linked));
      assert.equal((await built(linked)).length, 5);
    } finally {
      await Deno.remove(linked, { recursive: true });
    }
    // The framework's test app, and the project: the example, or a team's own, as small as it is
    // once the example is removed (tests/process/clean_start_test.ts).
    assert.ok((await built(FIXTURE_ROOT)).length > 10);
    for (const project of [FIXTURE_ROOT, PROJECT_ROOT]) {
      assert.deepEqual(modulesAddedSince(project, []), await built(project), project);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
