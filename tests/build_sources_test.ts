/**
 * @module
 * An app made from a manifest older than the project says so (`lib/server/build_sources.ts`): a
 * `_middleware.ts` added after the build is in no manifest, so without a word its guard did not run
 * - in a product's in-process tests, and under `deno serve main.ts` after a pull without a build.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createApp } from "../lib/server.ts";
import { captureLogs } from "../lib/testing.ts";
import { memoryManifest } from "./helpers/app.ts";

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
