/**
 * @module
 * The stylesheets `deno task build` makes of what the app imports, on copies of the project with an
 * app of the test's own (`helpers/style_fixtures.ts`):
 *  - each is content-hashed, minified, with a source map that leads to its sources (through a CSS
 *    module's scoping and Tailwind's compiling), compressed copies beside it, and served as an
 *    immutable `text/css`, by `deno task start` and by `deno serve main.ts`;
 *  - a CSS module's class names are scoped by its path (the same `.card` in three files stays
 *    apart), and typed: `deno check` knows `styles.probe` and refuses `styles.nope`; `deno test`
 *    loads a route that imports stylesheets;
 *  - an edit gives the edited stylesheet a new name and leaves the others theirs;
 *  - what must not build says why in one line: a `url()` out of the project (a path or a
 *    symlink), a stylesheet that is not there, a CSS module that composes from itself.
 * The shared copy is built once (`builtCopy`); the second test's copy is its own, built twice and
 * checked and tested with Deno in between: about 25 s on a quiet machine, the price of proving
 * that `deno check` and `deno test` see what the build wrote.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join, posix } from "node:path";
import { gunzipSync } from "node:zlib";
import type { ManifestStyles } from "../../lib/server.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";
import { STYLE_FILES } from "../helpers/style_fixtures.ts";

const IMMUTABLE = "public, max-age=31536000, immutable";

/** The manifest's stylesheets, read from its text (importing it would load the copy's app). */
function stylesOf(root: string): ManifestStyles {
  const manifest = Deno.readTextFileSync(join(root, "_build/manifest.gen.ts"));
  return JSON.parse(/^ {2}styles: (.*),$/m.exec(manifest)![1]);
}

/** The file a `/_app/` URL names. */
const fileOf = (root: string, url: string) =>
  join(root, "_build/static", url.slice("/_app".length));

async function run(root: string, ...args: string[]): Promise<{ code: number; said: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    env: { NODE_ENV: "production" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const said = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  return { code, said };
}

Deno.test("stylesheets are hashed, minified, mapped to their sources, compressed, immutable", async (t) => {
  const root = await builtCopy("styles", STYLE_FILES);
  const styles = stylesOf(root);
  const page = styles.pages["styled/index.tsx"];
  const island = styles.islands.StyledIsland;
  assert.equal(page.length, 6);
  assert.equal(island.length, 2, "the shared stylesheet and the island's module");
  assert.equal(new Set([...page, ...island]).size, 7, "the shared one is one stylesheet");

  const sources: Record<string, string> = {
    app: "routes/fixture-app.css",
    shared: "components/shared.css",
    layout: "routes/styled/layout.css",
    page: "routes/styled/page.css",
    "page-module": "routes/styled/page.module.css",
    tailwind: "routes/styled/tw.css",
    island: "islands/StyledIsland.module.css",
  };
  await t.step("each file: hashed, minified, its map leading to its source", () => {
    for (const url of new Set([...page, ...island])) {
      assert.match(url, /^\/_app\/css\/[\w./-]+-[A-Z0-9]{8}\.css$/);
      const css = Deno.readTextFileSync(fileOf(root, url));
      const [body, comment] = css.trimEnd().split("\n");
      assert.doesNotMatch(body, /\n|; |\{ /, `${url} is minified`);
      assert.equal(comment, `/*# sourceMappingURL=${posix.basename(url)}.map */`);
      const name = /--sheet-([\w-]+)/.exec(body)![1];
      const map = JSON.parse(Deno.readTextFileSync(`${fileOf(root, url)}.map`));
      const mapped = map.sources.map((source: string) =>
        posix.relative(root, posix.join(posix.dirname(fileOf(root, url)), source))
      );
      assert.ok(mapped.includes(sources[name]), `${url}: ${mapped}`);
      const text = map.sourcesContent[mapped.indexOf(sources[name])];
      assert.equal(text, STYLE_FILES[sources[name]], `${url}: the source as written`);
      assert.match(map.mappings, /^[A-Za-z0-9+/,;]+$/);
      const gz = Deno.readFileSync(`${fileOf(root, url)}.gz`);
      assert.equal(new TextDecoder().decode(gunzipSync(gz)), css);
      assert.ok(existsSync(`${fileOf(root, url)}.br`));
    }
  });

  await t.step("CSS module names: scoped by path, `.card` three times apart", () => {
    const classes = (module: string) =>
      Deno.readTextFileSync(join(root, "_build/css", `${module}.ts`));
    const pageModule = classes("routes/styled/page.module.css");
    const islandModule = classes("islands/StyledIsland.module.css");
    const pageCard = /"card": "(card_[\w-]+)"/.exec(pageModule)![1];
    const islandCard = /"card": "(card_[\w-]+)"/.exec(islandModule)![1];
    assert.notEqual(pageCard, islandCard);
    assert.match(pageModule, /} as const;/, "typed: each name a literal");
    const globalCss = Deno.readTextFileSync(fileOf(root, page[3]));
    assert.match(globalCss, /\.card\{outline-style:dotted\}/, "the global .card as written");
    const config = JSON.parse(Deno.readTextFileSync(join(root, "deno.json")));
    assert.equal(
      config.imports["@/components/shared.css"],
      "./_build/css/components/shared.css.ts",
      "an import through an alias has its own entry",
    );
    assert.equal(
      config.imports["./routes/styled/page.module.css"],
      "./_build/css/routes/styled/page.module.css.ts",
    );
  });

  for (
    const [how, options] of [
      ["deno task start", {}],
      ["deno serve main.ts", {
        args: (port: number) => ["serve", "-A", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
      }],
    ] as const
  ) {
    await t.step(`${how}: linked in <head>, served immutable and compressed`, async () => {
      await using server = await startServer({}, { root, ...options });
      const html = await (await server.fetch("/styled")).text();
      const head = html.slice(0, html.indexOf("</head>"));
      const linked = [...head.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map(([, h]) => h);
      assert.deepEqual(linked, [...page, island[1]]);
      const res = await server.fetch(page[4], { headers: { "Accept-Encoding": "br" } });
      await res.body?.cancel();
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("cache-control"), IMMUTABLE);
      assert.match(res.headers.get("content-type")!, /^text\/css/);
      assert.equal(res.headers.get("content-encoding"), "br");
    });
  }
});

Deno.test("stylesheets are typed for deno check, load under deno test, rehash on an edit", async () => {
  await using copy = await copyProject();
  for (const [path, source] of Object.entries(STYLE_FILES)) await copy.write(path, source);
  await copy.write(
    "styles_probe_test.tsx",
    `import assert from "node:assert/strict";
import { renderToString } from "react-dom/server";
import styles from "./routes/styled/page.module.css";
import Page from "./routes/styled/index.tsx";

Deno.test("a route that imports stylesheets renders", () => {
  assert.match(renderToString(<Page />), new RegExp(styles.probe));
});
`,
  );
  const build = await run(copy.root, "task", "build");
  assert.equal(build.code, 0, build.said);
  const before = stylesOf(copy.root).pages["styled/index.tsx"];

  const checked = await run(copy.root, "check", "routes/styled/index.tsx", "styles_probe_test.tsx");
  assert.equal(checked.code, 0, checked.said);
  const tested = await run(copy.root, "test", "-A", "styles_probe_test.tsx");
  assert.equal(tested.code, 0, tested.said);
  await copy.write(
    "routes/styled/typo.tsx",
    `import styles from "./page.module.css";\nexport default () => <p className={styles.nope} />;\n`,
  );
  const typo = await run(copy.root, "check", "routes/styled/typo.tsx");
  assert.equal(typo.code, 1, typo.said);
  assert.match(typo.said, /Property 'nope' does not exist/);
  await Deno.remove(join(copy.root, "routes/styled/typo.tsx"));

  await copy.write(
    "routes/styled/page.css",
    STYLE_FILES["routes/styled/page.css"] + ".global-probe { color: rgb(9, 9, 9); }\n",
  );
  const rebuilt = await run(copy.root, "task", "build");
  assert.equal(rebuilt.code, 0, rebuilt.said);
  const after = stylesOf(copy.root).pages["styled/index.tsx"];
  assert.notEqual(after[3], before[3], "the edited stylesheet has a new name");
  assert.deepEqual([...after.slice(0, 3), ...after.slice(4)], [
    ...before.slice(0, 3),
    ...before.slice(4),
  ]);
  assert.ok(existsSync(fileOf(copy.root, before[3])), "the old one stays, for open pages");
});

Deno.test("what cannot build says why, in one line", async (t) => {
  await using copy = await copyProject();
  const page = (css: string) => `import "./${css}";\nexport default () => <p />;\n`;
  await Deno.symlink("/etc/hostname", join(copy.root, "routes/linked.png"));
  for (
    const [what, files, line] of [
      [
        "a url() out of the project",
        {
          "routes/out.css": "p { background: url(../../../../../../../../../etc/hostname); }\n",
          "routes/out.tsx": page("out.css"),
        },
        /routes\/out\.css:1:\d+: "\.\.\/(\.\.\/)+etc\/hostname" is outside the project/,
      ],
      [
        "a url() through a symlink out of the project",
        {
          "routes/out.css": "p { background: url(./linked.png); }\n",
          "routes/out.tsx": page("out.css"),
        },
        /routes\/out\.css:1:\d+: "\.\/linked\.png" is outside the project/,
      ],
      [
        "a stylesheet that is not there",
        { "routes/out.tsx": page("nope.css") },
        /routes\/out\.tsx:1:8: Module not found "\.\/nope\.css"/,
      ],
      [
        "a CSS module that composes from itself",
        {
          "routes/a.module.css": '.a { composes: b from "./b.module.css"; }\n',
          "routes/b.module.css": '.b { composes: a from "./a.module.css"; }\n',
          "routes/out.tsx": page("a.module.css"),
        },
        /routes\/[ab]\.module\.css: composes from itself, in a cycle/,
      ],
    ] as const
  ) {
    await t.step(what, async () => {
      for (const [path, source] of Object.entries(files)) await copy.write(path, source);
      try {
        const { code, said } = await run(copy.root, "task", "build");
        assert.equal(code, 1, said);
        assert.match(said, line);
        assert.doesNotMatch(said, /^\s+at /m, "no stack");
        const assets = join(copy.root, "_build/static/assets");
        const copied = existsSync(assets) ? readdirSync(assets) : [];
        assert.ok(!copied.some((file) => file.startsWith("hostname")), `${copied}`);
      } finally {
        for (const path of Object.keys(files)) await Deno.remove(join(copy.root, path));
      }
    });
  }
});
