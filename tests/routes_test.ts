/**
 * @module
 * File-system route conventions (`lib/build/conventions.ts`): file → Hono pattern, ordering,
 * special files, the nearest `_error.tsx`, and conflicts. The ordering is also checked against
 * Hono's own router, which is what serves; the scan and the manifest carry each route's error page.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { join } from "node:path";
import {
  assertUniquePatterns,
  compareRoutes,
  foldersOf,
  isRouteFile,
  nearestErrorPage,
  patternFor,
  type RouteFile,
  specialFile,
} from "../lib/build/conventions.ts";
import { manifestSource } from "../lib/build/manifest_file.ts";
import { scan } from "../lib/build/scan.ts";

const route = (file: string): RouteFile => ({ file, pattern: patternFor(file) });

Deno.test("patternFor maps files to URL patterns", () => {
  const cases: [string, string][] = [
    ["index.tsx", "/"],
    ["about.tsx", "/about"],
    ["api/time.ts", "/api/time"],
    ["blog/index.tsx", "/blog"],
    ["blog/[slug].tsx", "/blog/:slug"],
    ["shop/[category]/[id].tsx", "/shop/:category/:id"],
    ["docs/[...path].tsx", "/docs/:path{.+}"],
    ["[...rest].tsx", "/:rest{.+}"],
    ["(info)/about.tsx", "/about"],
    ["(marketing)/(deep)/pricing/index.tsx", "/pricing"],
    ["(group)/index.tsx", "/"],
    ["files/report.v2.tsx", "/files/report.v2"],
    ["a-b_c~d.jsx", "/a-b_c~d"],
  ];
  for (const [file, pattern] of cases) assert.equal(patternFor(file), pattern, file);
});

Deno.test("patternFor rejects segments it cannot express, naming the file", () => {
  assert.throws(() => patternFor("docs/[...path]/edit.tsx"), {
    message: "routes/docs/[...path]/edit.tsx: a catch-all [...path] must be the last segment",
  });
  for (const file of ["a b.tsx", "[a]-[b].tsx", "blog/[bad-name].tsx", "x/[].tsx", "%41.tsx"]) {
    assert.throws(() => patternFor(file), (error: Error) => {
      assert.match(error.message, /is not a valid segment/);
      assert.ok(error.message.startsWith(`routes/${file}: `), error.message);
      return true;
    });
  }
});

Deno.test("specialFile and isRouteFile tell special files from routes", () => {
  assert.equal(specialFile("_app.tsx"), "_app");
  assert.equal(specialFile("_404.tsx"), "_404");
  assert.equal(specialFile("blog/_layout.tsx"), "_layout");
  assert.equal(specialFile("(g)/admin/_middleware.ts"), "_middleware");
  assert.equal(specialFile("board/_error.tsx"), "_error");
  assert.equal(isRouteFile("board/_error.tsx"), false);
  assert.equal(specialFile("about.tsx"), undefined);
  assert.equal(specialFile("_helpers.ts"), undefined);

  assert.equal(isRouteFile("about.tsx"), true);
  assert.equal(isRouteFile("blog/[slug].tsx"), true);
  assert.equal(isRouteFile("api/time.ts"), true);
  assert.equal(isRouteFile("_app.tsx"), false);
  assert.equal(isRouteFile("blog/_layout.tsx"), false);
  assert.equal(isRouteFile("_components/Card.tsx"), false, "an _folder is private");
  assert.equal(isRouteFile("notes.md"), false);
  assert.equal(isRouteFile("styles.css"), false);
});

Deno.test("foldersOf lists the folders from the root down", () => {
  assert.deepEqual(foldersOf("index.tsx"), [""]);
  assert.deepEqual(foldersOf("blog/[slug].tsx"), ["", "blog"]);
  assert.deepEqual(foldersOf("(g)/admin/users.tsx"), ["", "(g)", "(g)/admin"]);
});

Deno.test("compareRoutes puts static before param before catch-all", () => {
  const files = [
    "[...rest].tsx",
    "docs/[...path].tsx",
    "docs/[id].tsx",
    "docs/intro.tsx",
    "index.tsx",
    "blog/[slug].tsx",
    "blog/new.tsx",
    "[user]/settings.tsx",
    "about/[tab].tsx",
  ];
  const sorted = files.map(route).sort(compareRoutes).map((r) => r.pattern);
  const before = (a: string, b: string) =>
    assert.ok(sorted.indexOf(a) < sorted.indexOf(b), `${a} before ${b} in ${sorted}`);
  before("/docs/intro", "/docs/:id");
  before("/docs/intro", "/docs/:path{.+}");
  before("/docs/:id", "/docs/:path{.+}");
  before("/blog/new", "/blog/:slug");
  before("/about/:tab", "/:user/settings");
  before("/docs/:path{.+}", "/:rest{.+}");
  assert.equal(sorted.at(-1), "/:rest{.+}");
  // The order is total and stable: sorting the reverse gives the same list.
  assert.deepEqual(files.map(route).reverse().sort(compareRoutes).map((r) => r.pattern), sorted);
});

Deno.test("Hono, given routes in compareRoutes order, picks the most specific", async () => {
  const files = ["docs/[...path].tsx", "docs/[id].tsx", "docs/intro.tsx", "[...rest].tsx"];
  const app = new Hono();
  for (const { file, pattern } of files.map(route).sort(compareRoutes)) {
    app.all(pattern, (c) => c.json({ file, params: c.req.param() }));
  }
  const match = async (path: string) => await (await app.request(path)).json();
  assert.deepEqual(await match("/docs/intro"), { file: "docs/intro.tsx", params: {} });
  assert.deepEqual(await match("/docs/setup"), {
    file: "docs/[id].tsx",
    params: { id: "setup" },
  });
  assert.deepEqual(await match("/docs/a/b/c"), {
    file: "docs/[...path].tsx",
    params: { path: "a/b/c" },
  });
  assert.deepEqual(await match("/elsewhere/x"), {
    file: "[...rest].tsx",
    params: { rest: "elsewhere/x" },
  });
});

Deno.test("assertUniquePatterns rejects two files for one URL", () => {
  assert.throws(() => assertUniquePatterns([route("a.tsx"), route("(g)/a.tsx")]), {
    message: "routes/a.tsx and routes/(g)/a.tsx both match /a",
  });
  assert.throws(
    () => assertUniquePatterns([route("index.tsx"), route("(home)/index.tsx")]),
    /routes\/index\.tsx and routes\/\(home\)\/index\.tsx both match \/$/,
  );
  // Parameter names do not make two routes different.
  assert.throws(
    () => assertUniquePatterns([route("blog/[slug].tsx"), route("blog/[id].tsx")]),
    /both match \/blog\/:id/,
  );
  assertUniquePatterns(["a.tsx", "b.tsx", "a/[x].tsx", "a/[...x].tsx"].map(route));
});

Deno.test("nearestErrorPage: the closest _error up the folders, in its folder's layouts", () => {
  const errors = new Map([["", "_error.tsx"], ["board", "board/_error.tsx"]]);
  const layouts = new Map([
    ["", "_layout.tsx"],
    ["board", "board/_layout.tsx"],
    ["board/tasks", "board/tasks/_layout.tsx"],
  ]);
  assert.deepEqual(nearestErrorPage(errors, layouts, "board/tasks/[id].tsx"), {
    module: "board/_error.tsx",
    layouts: ["_layout.tsx", "board/_layout.tsx"],
  });
  assert.deepEqual(nearestErrorPage(errors, layouts, "about.tsx"), {
    module: "_error.tsx",
    layouts: ["_layout.tsx"],
  });
  assert.equal(nearestErrorPage(new Map(), layouts, "about.tsx"), undefined);
});

Deno.test("the scan and the manifest give each route its nearest _error.tsx", async () => {
  const root = await Deno.makeTempDir();
  try {
    const files = [
      "_layout.tsx",
      "_error.tsx",
      "index.tsx",
      "board/_layout.tsx",
      "board/_error.tsx",
      "board/tasks/_layout.tsx",
      "board/tasks/[id].tsx",
      "(info)/about.tsx",
    ];
    for (const file of files) {
      await Deno.mkdir(join(root, "routes", file, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, "routes", file), "export default () => null;\n");
    }
    const found = await scan(root);
    const errorOf = (file: string) => found.routes.find((r) => r.file === file)?.errorPage;
    assert.deepEqual(errorOf("board/tasks/[id].tsx"), {
      file: "board/_error.tsx",
      layouts: ["_layout.tsx", "board/_layout.tsx"],
    });
    assert.deepEqual(errorOf("(info)/about.tsx"), { file: "_error.tsx", layouts: ["_layout.tsx"] });
    assert.deepEqual(found.errorPage, { file: "_error.tsx", layouts: ["_layout.tsx"] });

    const source = manifestSource({
      scan: found,
      assets: { boot: { entry: "/_app/boot.js", imports: [] }, islands: {} },
      assetDir: "_build/static",
      actions: [],
      buildId: "test",
      outDir: "_build",
    });
    const ref = (file: string) =>
      source.match(new RegExp(`import \\* as (\\$\\d+) from "\\.\\./routes/${file}"`))?.[1];
    const [root_, board, rootLayout, boardLayout] = [
      "_error\\.tsx",
      "board/_error\\.tsx",
      "_layout\\.tsx",
      "board/_layout\\.tsx",
    ].map(ref);
    assert.ok(root_ && board && rootLayout && boardLayout, source);
    assert.ok(
      source.includes(
        `errorPage: { file: "board/_error.tsx", module: ${board}, layouts: [${rootLayout}, ${boardLayout}] } },`,
      ),
      source,
    );
    assert.ok(
      source.includes(
        `  errorPage: { file: "_error.tsx", module: ${root_}, layouts: [${rootLayout}] },`,
      ),
      source,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("routes/_settings.ts is the manifest's settings, at the root only", async () => {
  assert.equal(specialFile("_settings.ts"), "_settings");
  assert.equal(isRouteFile("_settings.ts"), false);
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(root, "routes/admin"), { recursive: true });
    await Deno.writeTextFile(join(root, "routes/_settings.ts"), "export default {};\n");
    await Deno.writeTextFile(join(root, "routes/index.tsx"), "export default () => null;\n");
    const found = await scan(root);
    assert.equal(found.settings, "_settings.ts");
    const source = manifestSource({
      scan: found,
      assets: { boot: { entry: "/_app/boot.js", imports: [] }, islands: {} },
      assetDir: "_build/static",
      actions: [],
      buildId: "test",
      outDir: "_build",
    });
    const name = source.match(/import \* as (\$\d+) from "\.\.\/routes\/_settings\.ts"/)?.[1];
    assert.ok(name && source.includes(`  settings: ${name}.default,`), source);

    await Deno.writeTextFile(join(root, "routes/admin/_settings.ts"), "export default {};\n");
    await assert.rejects(scan(root), /routes\/admin\/_settings.ts: _settings belongs at the root/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
