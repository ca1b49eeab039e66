/**
 * @module
 * What `deno task build` leaves in `_build/static/`, on a copy of the test app: minified chunks with
 * content-hashed names and linked source maps, and a deploy that changes one island renames only
 * the chunks holding its code, so every other island and the boot runtime keep their URLs (and the
 * browser's cache), while the chunks of the build before stay on disk for a server still running it.
 * The Sentry packages are linked into the browser SDK's entry once and kept (`_build/vendor/`)
 * until `lib/sentry/` changes, without a second React or the way back to their sources.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { copyProject } from "../helpers/project_copy.ts";

/** Each `.js` file the build wrote, with the sources its map lists. */
type Outputs = Map<string, string[]>;

async function build(root: string): Promise<Outputs> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "lib/cli/build.ts"],
    cwd: root,
    env: { NODE_ENV: "production" },
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const outputs: Outputs = new Map();
  const dir = join(root, "_build/static");
  // The newest build's files, first in the history (earlier builds' stay beside them).
  const [files]: string[][] = JSON.parse(await Deno.readTextFile(join(root, "_build/builds.json")));
  for (const name of files) {
    if (!name.endsWith(".js")) continue;
    const map = JSON.parse(await Deno.readTextFile(join(dir, `${name}.map`)));
    outputs.set(name, map.sources);
  }
  return outputs;
}

const entryOf = (outputs: Outputs, name: string) => {
  const found = [...outputs.keys()].filter((file) => file.startsWith(`${name}-`));
  assert.equal(found.length, 1, `one ${name} entry`);
  return found[0];
};

const holds = (sources: string[], file: string) => sources.some((s) => s.endsWith(`/${file}`));

Deno.test("the build: minified, content-hashed chunks, stable across unrelated changes", async (t) => {
  await using project = await copyProject();
  const before = await build(project.root);
  const read = (name: string) => Deno.readTextFile(join(project.root, "_build/static", name));

  await t.step("every chunk has a hashed name and a linked source map", async () => {
    for (const name of before.keys()) {
      assert.match(name, /^[\w-]+-[A-Z0-9]{8}\.js$/);
      // Then the Sentry debug ID its map shares (see sourcemaps_test.ts).
      const tail = new RegExp(
        `\n//# sourceMappingURL=${name}\\.map\n//# debugId=[0-9a-f-]{36}\n$`,
      );
      assert.match(await read(name), tail, name);
    }
  });

  await t.step("the output is minified", async () => {
    // Minified, the ~200 KB boot runtime is a few long lines; unminified, tens of thousands.
    const boot = await read(entryOf(before, "boot"));
    assert.ok(boot.length / boot.split("\n").length > 1000, "boot: long lines");
    for (const island of ["Counter", "Wall"]) {
      // Beside the line that registers the chunk's debug ID, and the comments at the end.
      const lines = (await read(entryOf(before, island))).split("\n")
        .filter((line) => line && !line.startsWith("//# ") && !line.includes("_sentryDebugIds"));
      assert.equal(lines.length, 1, `${island}: one line of code`);
    }
  });

  await t.step("editing one island renames only the chunks that hold it", async () => {
    const file = join(project.root, "islands/Wall.tsx");
    const source = await Deno.readTextFile(file);
    const edited = source.replace(`>Post</button>`, `>Post it now</button>`);
    assert.notEqual(edited, source, "the edit applies");
    await Deno.writeTextFile(file, edited);
    const after = await build(project.root);

    const holding = [...before].filter(([, sources]) => holds(sources, "islands/Wall.tsx"));
    const renamed = [...before.keys()].filter((name) => !after.has(name));
    assert.deepEqual(
      renamed.sort(),
      holding.map(([name]) => name).sort(),
      "renamed: those holding it",
    );
    assert.ok(renamed.includes(entryOf(before, "Wall")));
    assert.equal(after.size, before.size);
    assert.ok((await read(entryOf(after, "Wall"))).includes("Post it now"));
    assert.equal(entryOf(after, "Counter"), entryOf(before, "Counter"));
    assert.equal(entryOf(after, "boot"), entryOf(before, "boot"));
    // A server started before this build still serves its pages' chunks.
    for (const name of renamed) assert.ok(await read(name), `${name} kept`);
  });

  await t.step(
    "the browser SDK: linked once, kept, linked again when lib/sentry/ changes",
    async () => {
      const sdk = entryOf(before, "sentry");
      const sources = before.get(sdk)!;
      // Its map still reaches into the packages' own sources, through the kept bundle's map.
      assert.ok(sources.some((s) => s.includes("/@sentry/core/")), "maps into @sentry/core");
      assert.ok(holds(sources, "lib/sentry/browser.ts"), "and into our entry");
      // React stays an import, shared with the islands' chunks: no second copy in the SDK's.
      assert.ok(!sources.some((s) => s.includes("/react-dom/")), "no React DOM inside");
      // Beside the server's SDK bundle (`server-sdk-*`, lib/build/sentry_server_sdk.ts).
      const kept = async () =>
        (await Array.fromAsync(Deno.readDir(join(project.root, "_build/vendor"))))
          .filter((entry) => entry.name.startsWith("browser-sdk-"));
      const [entry] = await kept();
      assert.match(entry.name, /^browser-sdk-[0-9a-f]{16}$/);

      assert.equal(entryOf(await build(project.root), "sentry"), sdk, "unchanged: the same chunk");
      const file = join(project.root, "lib/sentry/browser.ts");
      await Deno.writeTextFile(
        file,
        (await Deno.readTextFile(file)).replace("`auto.browser.${kind}`", "`auto.edited.${kind}`"),
      );
      const edited = entryOf(await build(project.root), "sentry");
      assert.notEqual(edited, sdk);
      assert.ok((await read(edited)).includes("auto.edited."), "the edit is in the chunk");
      const now = await kept();
      assert.equal(now.length, 1, "the earlier bundle is gone");
      assert.notEqual(now[0].name, entry.name);
    },
  );
});

Deno.test("a mistake in the project's files: one line naming it, exit 1, no stack", async () => {
  await using project = await copyProject();
  // `routes/(info)/about.tsx` is `/about` already.
  await Deno.mkdir(join(project.root, "routes/about"), { recursive: true });
  await Deno.writeTextFile(
    join(project.root, "routes/about/index.tsx"),
    "export default function About() {\n  return <p>again</p>;\n}\n",
  );
  for (const task of ["build", "start"]) {
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["task", task],
      cwd: project.root,
      env: { PORT: "0", HOSTNAME: "127.0.0.1" },
      stdout: "null",
      stderr: "piped",
    }).output();
    const said = new TextDecoder().decode(stderr);
    assert.equal(code, 1, `${task}: ${said}`);
    assert.match(
      said,
      /^Build failed: routes\/.*about.*\.tsx and routes\/.*about.*\.tsx both match \/about$/m,
    );
    assert.doesNotMatch(said, /Uncaught|^\s+at /m, `${task}: no stack`);
  }
});
