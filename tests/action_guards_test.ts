/**
 * @module
 * The build's warning for an actions module less guarded than every page that calls it
 * (`lib/build/action_guards.ts`): the desk's actions beside `routes/desk/` instead of in it run
 * without its `requireRole`. The routes are a real scan of a project written here; the imports are
 * the graph's, as the build reads them from `deno info`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { lessGuardedActions, paramlessGuards } from "../lib/build/action_guards.ts";
import type { LocalImport } from "../lib/build/graph.ts";
import { scan } from "../lib/build/scan.ts";

const FILES = [
  "routes/_middleware.ts",
  "routes/index.tsx",
  "routes/login.tsx",
  "routes/desk/_middleware.ts",
  "routes/desk/index.tsx",
  "routes/desk/_actions.ts",
  "routes/account/_middleware.ts",
  "routes/account/index.tsx",
  "routes/_desk/actions.ts",
  "routes/_auth/actions.ts",
  "islands/Desk.tsx",
];

/** Who imports whom: the desk page renders the island, which calls the actions. */
function importsOf(actions: string): Map<string, LocalImport[]> {
  const to = (path: string): LocalImport => ({ specifier: path, path, at: "" });
  return new Map([
    ["routes/desk/index.tsx", [to("islands/Desk.tsx"), to("routes/_desk/types.ts")]],
    ["islands/Desk.tsx", [to(actions)]],
    ["routes/login.tsx", [to("routes/_auth/actions.ts")]],
    ["routes/account/index.tsx", [to("routes/_auth/actions.ts")]],
  ]);
}

const module = (file: string) => ({ file, exports: [] });

Deno.test("an actions module beside a guarded folder is warned of; inside it, or shared, is not", async () => {
  const root = await Deno.makeTempDir();
  try {
    for (const file of FILES) {
      await Deno.mkdir(join(root, file, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, file), "export default () => null;\n");
    }
    const found = await scan(root);
    const beside = lessGuardedActions(
      found,
      [module("routes/_desk/actions.ts"), module("routes/_auth/actions.ts")],
      importsOf("routes/_desk/actions.ts"),
    );
    assert.deepEqual(beside, [
      "routes/_desk/actions.ts: its actions run behind routes/_middleware.ts only, while every " +
      "page that calls them (routes/desk/index.tsx) is behind routes/desk/_middleware.ts too. An " +
      "action answers to the middleware of its own folder, not the page's: move the module into " +
      "routes/desk/ (routes/desk/_actions.ts), or check in each action (docs/actions.md, " +
      '"Behind middleware").',
    ]);
    // In the guarded folder: its chain. Sign-in's actions: called from /login (root chain only) as
    // well as from the guarded /account, so nothing every caller has is missing.
    const inside = lessGuardedActions(
      found,
      [module("routes/desk/_actions.ts"), module("routes/_auth/actions.ts")],
      importsOf("routes/desk/_actions.ts"),
    );
    assert.deepEqual(inside, []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a [param] folder's middleware cannot guard actions: the build says so, in or beside it", async () => {
  // A clinic's pages are behind a guard reading c.req.param("clinic"); an action's call
  // (/_action/:id) has no clinic, so inside the folder the guard failed every call (500), and the
  // advice beside it ("move the module into routes/c/[clinic]/") led there.
  const root = await Deno.makeTempDir();
  try {
    for (
      const file of [
        "routes/index.tsx",
        "routes/c/[clinic]/_middleware.ts",
        "routes/c/[clinic]/index.tsx",
        "routes/c/[clinic]/_actions.ts",
        "routes/c/_rota/actions.ts",
        "routes/docs/[...path].tsx",
        "routes/docs/_actions.ts",
      ]
    ) {
      await Deno.mkdir(join(root, file, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, file), "export default () => null;\n");
    }
    const found = await scan(root);
    const actions = [
      "routes/c/[clinic]/_actions.ts",
      "routes/c/_rota/actions.ts",
      "routes/docs/_actions.ts",
    ]
      .map(module);
    assert.deepEqual(paramlessGuards(found, actions), [
      "routes/c/[clinic]/_actions.ts: its actions run behind routes/c/[clinic]/_middleware.ts, in a " +
      "dynamic folder, where an action's call has no clinic: its URL is /_action/:id, not the " +
      'page\'s, so c.req.param() there is undefined (c.req.param("clinic")). Put the module in a ' +
      "folder without [clinic] (beside a static guard such as requireUser()), take clinic as an " +
      'argument and check in each action (docs/actions.md, "Actions of a [param] folder").',
    ]);
    // Beside the folder, as the docs put them (each action checking the clinic it takes): no
    // warning, since no folder would give them that guard - before, one that nothing silenced.
    const to = (path: string): LocalImport => ({ specifier: path, path, at: "" });
    const beside = lessGuardedActions(
      found,
      actions,
      new Map([["routes/c/[clinic]/index.tsx", [to("routes/c/_rota/actions.ts")]]]),
    );
    assert.deepEqual(beside, []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("an actions module reached only through a guarded folder's layout is warned of", async () => {
  const root = await Deno.makeTempDir();
  try {
    for (const file of [...FILES, "routes/desk/_layout.tsx", "islands/DeskBar.tsx"]) {
      await Deno.mkdir(join(root, file, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, file), "export default () => null;\n");
    }
    const found = await scan(root);
    // The desk's pages render no island of their own: its layout's toolbar calls the actions.
    const to = (path: string): LocalImport => ({ specifier: path, path, at: "" });
    const imports = new Map([
      ["routes/desk/_layout.tsx", [to("islands/DeskBar.tsx")]],
      ["islands/DeskBar.tsx", [to("routes/_desk/actions.ts")]],
    ]);
    const warnings = lessGuardedActions(found, [module("routes/_desk/actions.ts")], imports);
    assert.equal(warnings.length, 1, "before: none (a layout was no caller)");
    assert.match(
      warnings[0],
      /^routes\/_desk\/actions\.ts: .*\(routes\/desk\/index\.tsx\) is behind routes\/desk\/_middleware\.ts/,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a static and a dynamic guard, (group) and [...path] folders: the static one is still warned of", async () => {
  // review15: a page behind routes/desk/_middleware.ts and routes/desk/[clinic]/_middleware.ts calling
  // a module beside both lacked the static guard and was warned of it, though the line read "its
  // actions run behind no _middleware.ts only ... too"; and a catch-all folder's advice named a
  // folder "[path]" where it is "[...path]".
  const root = await Deno.makeTempDir();
  try {
    for (
      const file of [
        "routes/index.tsx",
        "routes/desk/_middleware.ts",
        "routes/desk/[clinic]/_middleware.ts",
        "routes/desk/[clinic]/index.tsx",
        "routes/desk/[clinic]/settings/_middleware.ts",
        "routes/desk/[clinic]/settings/index.tsx",
        "routes/_desk/actions.ts",
        "routes/desk/_clinic/actions.ts",
        "routes/c/[clinic]/(staff)/_middleware.ts",
        "routes/c/[clinic]/(staff)/rota.tsx",
        "routes/c/[clinic]/(staff)/_actions.ts",
        "routes/docs/[...path]/_middleware.ts",
        "routes/docs/[...path]/index.tsx",
        "routes/docs/[...path]/_actions.ts",
      ]
    ) {
      await Deno.mkdir(join(root, file, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, file), "export default () => null;\n");
    }
    const found = await scan(root);
    const to = (path: string): LocalImport => ({ specifier: path, path, at: "" });
    const actions = [
      "routes/_desk/actions.ts",
      "routes/desk/_clinic/actions.ts",
      "routes/c/[clinic]/(staff)/_actions.ts",
      "routes/docs/[...path]/_actions.ts",
    ].map(module);
    const page = "routes/desk/[clinic]/index.tsx";
    const calls = new Map([
      [page, [to("routes/_desk/actions.ts"), to("routes/desk/_clinic/actions.ts")]],
      // A guard below the param is the param's too (docs/actions.md): each action checks.
      ["routes/desk/[clinic]/settings/index.tsx", [to("routes/desk/_clinic/actions.ts")]],
    ]);
    // Beside both: the static guard is missing (the dynamic one could not guard it anyway); in the
    // static folder beside the dynamic one: nothing missing that a folder could give.
    assert.deepEqual(lessGuardedActions(found, actions, calls), [
      "routes/_desk/actions.ts: its actions run behind no _middleware.ts, while every page that " +
      `calls them (${page}) is behind routes/desk/_middleware.ts. An action answers to the ` +
      "middleware of its own folder, not the page's: move the module into routes/desk/ " +
      '(routes/desk/_actions.ts), or check in each action (docs/actions.md, "Behind middleware").',
    ]);
    const paramless = paramlessGuards(found, actions);
    assert.deepEqual(paramless.map((line) => line.slice(0, line.indexOf(":"))), [
      "routes/c/[clinic]/(staff)/_actions.ts",
      "routes/docs/[...path]/_actions.ts",
    ]);
    assert.match(paramless[0], /has no clinic: .* Put the module in a folder without \[clinic\] /);
    assert.match(
      paramless[1],
      /has no path: .* Put the module in a folder without \[\.\.\.path\] /,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
