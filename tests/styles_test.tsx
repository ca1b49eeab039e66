/**
 * @module
 * Stylesheets, in-process: how a page links its stylesheets (an app in memory with a manifest's
 * lists: in `<head>`, in order, each once, an island's only where it renders); which stylesheets
 * each module brings and in what order, from a module graph made here (`planStyles`); the build's
 * entries in `deno.json` (`withEntries`: its own added and dropped, nothing else touched); CSS
 * modules' names; which stylesheets are Tailwind's.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LocalImport, ServerGraph } from "../lib/build/graph.ts";
import type { Scan } from "../lib/build/scan.ts";
import { withEntries } from "../lib/build/styles/deno_json.ts";
import { cssModules } from "../lib/build/styles/modules.ts";
import { planStyles } from "../lib/build/styles/plan.ts";
import { isTailwind } from "../lib/build/styles/tailwind.ts";
import { type AppProps, type ErrorPageProps, httpError } from "../lib/mod.ts";
import { createApp } from "../lib/server.ts";
import { memoryManifest } from "./helpers/app.ts";
import { PROJECT_ROOT } from "./helpers/project_copy.ts";

function Badge() {
  return <b>badge</b>;
}

const manifest = {
  ...memoryManifest({
    routes: {
      "_app.tsx": {
        default: ({ Component }: AppProps) => (
          <html>
            <head>
              <meta charSet="utf-8" />
              <title>t</title>
            </head>
            <body>
              <Component />
            </body>
          </html>
        ),
      },
      "with-badge.tsx": {
        default: () => (
          <>
            <Badge />
            <Badge />
          </>
        ),
      },
      "without.tsx": { default: () => <p>no badge</p> },
      "_404.tsx": { default: () => <p>nowhere</p> },
      "board/closed.tsx": {
        default: () => {
          throw httpError(403, "closed");
        },
      },
      "board/_error.tsx": { default: ({ message }: ErrorPageProps) => <p>{message}</p> },
      "open.tsx": {
        default: () => {
          throw httpError(409, "taken");
        },
      },
    },
    islands: { Badge },
  }),
  styles: {
    pages: {
      "with-badge.tsx": ["/_app/css/app.css", "/_app/css/page.css"],
      "without.tsx": ["/_app/css/app.css"],
    },
    notFound: ["/_app/css/app.css", "/_app/css/404.css"],
    errorPages: { "board/_error.tsx": ["/_app/css/app.css", "/_app/css/board-error.css"] },
    plain: ["/_app/css/app.css"],
    islands: { Badge: ["/_app/css/page.css", "/_app/css/badge.css"] },
  },
};
const app = createApp(manifest, { root: PROJECT_ROOT });

async function linked(path: string): Promise<string[]> {
  const html = await (await app.request(path)).text();
  const head = html.slice(0, html.indexOf("</head>"));
  assert.equal(html.indexOf('rel="stylesheet"', head.length), -1, "none outside <head>");
  return [...head.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map(([, href]) => href);
}

Deno.test("a page links its stylesheets in <head>, then its islands', each once", async () => {
  assert.deepEqual(await linked("/with-badge"), [
    "/_app/css/app.css",
    "/_app/css/page.css",
    "/_app/css/badge.css",
  ]);
});

Deno.test("an island's stylesheets only where it renders; the not-found page's own", async () => {
  assert.deepEqual(await linked("/without"), ["/_app/css/app.css"]);
  assert.deepEqual(await linked("/nowhere"), ["/_app/css/app.css", "/_app/css/404.css"]);
});

Deno.test("an error page links its own stylesheets; the plain one _app's", async () => {
  assert.deepEqual(await linked("/board/closed"), [
    "/_app/css/app.css",
    "/_app/css/board-error.css",
  ]);
  assert.deepEqual(await linked("/open"), ["/_app/css/app.css"]);
});

/** A graph of `modules` (path → its imports, as `[specifier, path?]`). */
function graphOf(modules: Record<string, [string, string?][]>): ServerGraph {
  const imports = new Map<string, LocalImport[]>();
  for (const [module, list] of Object.entries(modules)) {
    imports.set(
      module,
      list.map(([specifier, path], i) => ({ specifier, path, at: `${module}:${i + 1}:1` })),
    );
  }
  return { server: Object.keys(modules), pages: [], unresolved: [], imports };
}

function scanOf(islands: Record<string, string>): Scan {
  return {
    routes: [{ file: "index.tsx", pattern: "/", layouts: ["_layout.tsx"], middlewares: [] }],
    app: "_app.tsx",
    rootLayouts: ["_layout.tsx"],
    rootMiddlewares: [],
    folders: [],
    middlewaresFor: () => [],
    islands: new Map(Object.entries(islands)),
    sources: [],
  };
}

/**
 * A project holding `files` (empty), for the plan's check that each stylesheet is there; removed
 * with the scope that holds it (`using project = projectWith()`).
 */
function projectWith(...files: string[]): Disposable & { root: string } {
  const root = mkdtempSync(join(tmpdir(), "styles-plan-"));
  for (const file of files) {
    Deno.mkdirSync(join(root, file, ".."), { recursive: true });
    writeFileSync(join(root, file), "");
  }
  return { root, [Symbol.dispose]: () => Deno.removeSync(root, { recursive: true }) };
}

Deno.test("each module's stylesheets: in the order imports run, a page's stopping at islands", () => {
  using project = projectWith(
    "routes/app.css",
    "components/card.css",
    "routes/page.css",
    "islands/a.module.css",
    "islands/b.css",
    "lib/never.css",
  );
  const { root } = project;
  const graph = graphOf({
    "routes/_app.tsx": [["shell", "lib/mod.ts"], ["./app.css", "routes/app.css"]],
    "routes/_layout.tsx": [],
    // The island first, the component's stylesheet before the page's own (evaluation order).
    "routes/index.tsx": [
      ["@/islands/A.tsx", "islands/A.tsx"],
      ["@/components/Card.tsx", "components/Card.tsx"],
      ["./page.css", "_build/css/routes/page.css.ts"],
    ],
    "components/Card.tsx": [["@/components/card.css", "components/card.css"]],
    "islands/A.tsx": [["./a.module.css", "islands/a.module.css"], ["./B.tsx", "islands/B.tsx"]],
    "islands/B.tsx": [["./b.css", "islands/b.css"], [
      "@/components/Card.tsx",
      "components/Card.tsx",
    ]],
    "lib/mod.ts": [["./never.css", "lib/never.css"]],
  });
  const plan = planStyles(
    root,
    graph,
    scanOf({ A: "islands/A.tsx", B: "islands/B.tsx" }),
    new Set(["lib/mod.ts"]),
  );
  assert.deepEqual(plan.problems, []);
  assert.deepEqual(plan.owners.get("routes/_app.tsx"), ["routes/app.css"]);
  assert.deepEqual(plan.owners.get("routes/index.tsx"), ["components/card.css", "routes/page.css"]);
  assert.deepEqual(plan.owners.get("islands/A.tsx"), [
    "islands/a.module.css",
    "islands/b.css",
    "components/card.css",
  ]);
  assert.deepEqual(plan.owners.get("islands/B.tsx"), ["islands/b.css", "components/card.css"]);
  assert.deepEqual(Object.fromEntries(plan.keys), {
    "./routes/app.css": "routes/app.css",
    "@/components/card.css": "components/card.css",
    "./routes/page.css": "routes/page.css",
    "./islands/a.module.css": "islands/a.module.css",
    "./islands/b.css": "islands/b.css",
    // Deno loads the framework's module too: it needs the entry, though no page links the file.
    "./lib/never.css": "lib/never.css",
  });
  assert.ok(![...plan.owners.values()].flat().includes("lib/never.css"));
  assert.ok(!plan.scanned.includes("lib/mod.ts"), "Tailwind scans the app, not the framework");
  assert.ok(plan.scanned.includes("components/Card.tsx"));
});

Deno.test("an import the plan cannot build: outside, missing, a package's", () => {
  using project = projectWith();
  const { root } = project;
  const plan = planStyles(
    root,
    graphOf({
      "routes/index.tsx": [
        ["../../x.css", "../../x.css"],
        ["./nope.css", "routes/nope.css"],
        ["pkg/style.css", undefined],
      ],
    }),
    scanOf({}),
    new Set(),
  );
  assert.deepEqual(plan.problems, [
    'routes/index.tsx:1:1: "../../x.css" is outside the project',
    'routes/index.tsx:2:1: Module not found "./nope.css"',
    'routes/index.tsx:3:1: "pkg/style.css" is a package\'s stylesheet: @import it from a stylesheet of yours',
  ]);
});

Deno.test("deno.json: the build's entries added in order and dropped, nothing else touched", () => {
  const text = `{
  // comments stay
  "tasks": { "x": "y" },
  "imports": {
    "./old.css": "./_build/css/old.css.ts",
    "./mine.css": "./somewhere/mine.ts",
    "@/": "./",
    "react": "npm:react@19.3.1"
  }
}
`;
  const next = withEntries(
    text,
    new Map([["./routes/app.css", "routes/app.css"], ["@/x.module.css", "x.module.css"]]),
  );
  assert.equal(
    next,
    `{
  // comments stay
  "tasks": { "x": "y" },
  "imports": {
    "./mine.css": "./somewhere/mine.ts",
    "./routes/app.css": "./_build/css/routes/app.css.ts",
    "@/": "./",
    "@/x.module.css": "./_build/css/x.module.css.ts",
    "react": "npm:react@19.3.1"
  }
}
`,
  );
  assert.equal(
    withEntries(
      next,
      new Map([["./routes/app.css", "routes/app.css"], ["@/x.module.css", "x.module.css"]]),
    ),
    next,
  );
});

Deno.test("CSS modules: named by path, the same every time; composes across files", () => {
  using project = projectWith();
  const { root } = project;
  writeFileSync(
    join(root, "a.module.css"),
    '.card { composes: base from "./b.module.css"; }\n.x :global(.y) { margin: 0; }\n',
  );
  writeFileSync(join(root, "b.module.css"), ".base { color: red; }\n");
  const first = cssModules(root).get("a.module.css");
  const again = cssModules(root).get("a.module.css");
  assert.deepEqual(first.classes, again.classes);
  assert.match(first.classes.card, /^card_[\w-]+ base_[\w-]+$/);
  assert.deepEqual(first.dependencies, ["b.module.css"]);
  assert.match(first.code, / \.y/, ":global stays as written");
  writeFileSync(join(root, "c.module.css"), ".card { color: red; }\n");
  assert.notEqual(
    cssModules(root).get("c.module.css").classes.card,
    first.classes.card.split(" ")[0],
  );
});

Deno.test("a Tailwind stylesheet: one whose first rules import tailwindcss", () => {
  for (
    const css of [
      '@import "tailwindcss";',
      "/* tw */\n@import 'tailwindcss' source(none);",
      '@layer theme, base;\n@import "tailwindcss/theme.css" layer(theme);',
      '@charset "utf-8";\n@import "./fonts.css";\n@import url("tailwindcss");',
    ]
  ) assert.ok(isTailwind(css), css);
  for (const css of [".a {}\n@import 'tailwindcss';", '@import "tailwind-like";', ""]) {
    assert.ok(!isTailwind(css), css);
  }
});
