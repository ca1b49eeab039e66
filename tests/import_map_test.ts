/**
 * @module
 * How the browser build reads the project's import map (`lib/build/import_map.ts`): the local
 * aliases of `deno.json`, exact keys and `/` prefixes, the longest prefix winning as in Deno; the
 * entries that name packages are left to esbuild's `node_modules` lookup. (That islands importing
 * through the aliases build and hydrate is `tests/e2e/import_graph_test.ts`.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { localAliases, resolveAlias } from "../lib/build/import_map.ts";

Deno.test("local aliases resolve as Deno's import map does; packages are not aliases", async () => {
  const root = await Deno.makeTempDir({ prefix: "import-map-" });
  try {
    await Deno.writeTextFile(
      join(root, "deno.json"),
      JSON.stringify({
        imports: {
          "shell": "./lib/mod.ts",
          "shell/runtime": "./lib/runtime.ts",
          "@/": "./",
          "@/ui/": "./components/ui/",
          "hono": "npm:hono@4",
          "hono/": "npm:/hono@4/",
        },
      }),
    );
    const aliases = await localAliases(root);
    const cases: [string, string | undefined][] = [
      ["shell", "./lib/mod.ts"],
      ["shell/runtime", "./lib/runtime.ts"],
      ["shell/data", undefined], // no such key, and "shell" is no prefix
      ["@/components/Card.tsx", "./components/Card.tsx"],
      ["@/ui/Button.tsx", "./components/ui/Button.tsx"], // the longer prefix
      ["hono", undefined],
      ["hono/cors", undefined],
      ["react", undefined],
    ];
    for (const [specifier, expected] of cases) {
      assert.equal(resolveAlias(aliases, specifier), expected, specifier);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the project's own aliases are the entry points and @/", async () => {
  const aliases = await localAliases(join(import.meta.dirname!, ".."));
  assert.equal(resolveAlias(aliases, "shell"), "./lib/mod.ts");
  assert.equal(resolveAlias(aliases, "shell/runtime"), "./lib/runtime.ts");
  assert.equal(resolveAlias(aliases, "shell/data"), "./lib/data.ts");
  assert.equal(resolveAlias(aliases, "shell/server"), "./lib/server.ts");
  assert.equal(resolveAlias(aliases, "shell/testing"), "./lib/testing.ts");
  assert.equal(resolveAlias(aliases, "shell/auth"), "./lib/auth.ts");
  assert.equal(resolveAlias(aliases, "@/islands/Counter.tsx"), "./islands/Counter.tsx");
});
