/**
 * @module
 * `deno task example:remove` (`lib/cli/remove_example.ts`) on a tree of the test's own: what it
 * says it did to `deno.json` is what it did.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODULES_DIR } from "../lib/build/styles/plan.ts";
import { EXAMPLE_LIST, MINIMAL_APP, removeExample } from "../lib/cli/remove_example.ts";
import { httpError } from "../lib/mod.ts";
import type { RouteModule } from "../lib/server.ts";
import { memoryApp } from "./helpers/app.ts";

Deno.test("example:remove says it dropped deno.json's entries of the stylesheets it removed", async () => {
  const root = await mkdtemp(join(tmpdir(), "remove-example-"));
  try {
    await mkdir(join(root, "islands"));
    await mkdir(join(root, "tests/example"), { recursive: true });
    await writeFile(join(root, "islands/Card.module.css"), ".card {}\n");
    await writeFile(
      join(root, EXAMPLE_LIST),
      JSON.stringify({ files: ["islands/Card.module.css"] }),
    );
    const entry = "./islands/Card.module.css";
    await writeFile(
      join(root, "deno.json"),
      JSON.stringify({
        imports: { [entry]: `./${MODULES_DIR}/islands/Card.module.css.ts`, react: "npm:react" },
      }),
    );

    const said = await removeExample(root);

    const imports = JSON.parse(await readFile(join(root, "deno.json"), "utf8")).imports;
    assert.deepEqual(Object.keys(imports), ["react"]);
    assert.ok(
      said.includes(`deno.json: dropped the entries of stylesheets it removed: ${entry}`),
      said.join("\n"),
    );
  } finally {
    await rm(root, { recursive: true });
  }
});

Deno.test("example:remove leaves every test task runnable: none names a path of the example's as such", async () => {
  // `deno test` stops on a path that is not there ("Import … failed, not found"), while a glob that
  // matches nothing is no error: after example:remove (docs/start.md), `tests/example/` is gone.
  const { tasks } = JSON.parse(await readFile(new URL("../deno.json", import.meta.url), "utf8"));
  const named: string[] = [];
  for (const [task, { command }] of Object.entries<{ command: string }>(tasks)) {
    for (const run of command.split("&&").filter((part) => /\bdeno test\b/.test(part))) {
      for (const path of run.trim().split(/\s+/).filter((word) => word.startsWith("tests/"))) {
        if (path.startsWith("tests/example") && !path.includes("*")) named.push(`${task}: ${path}`);
      }
    }
  }
  assert.deepEqual(named, []);
});

Deno.test("the minimal app's _404.tsx shows a product's 404 message, and an unknown URL's path", async () => {
  // Written inside the project, so that "shell" resolves through its import map.
  const file = await Deno.makeTempFile({ dir: import.meta.dirname, suffix: ".tsx" });
  try {
    await writeFile(file, MINIMAL_APP["routes/_404.tsx"]);
    const notFound = await import(`file://${file}`);
    const loan: RouteModule = {
      handler: {
        GET() {
          throw httpError(404, "Loan L1 does not exist");
        },
      },
      default: () => null,
    };
    const app = memoryApp({ routes: { "_404.tsx": notFound, "loans/[id].tsx": loan } });
    const gone = await app.request("/loans/L1");
    assert.equal(gone.status, 404);
    assert.match(
      await gone.text(),
      /<p>Loan L1 does not exist<!-- --> <a href="\/">Home<\/a><\/p>/,
    );
    const unknown = await app.request("/no/such/page");
    assert.equal(unknown.status, 404);
    assert.match(await unknown.text(), /Nothing lives at \/no\/such\/page\./);
  } finally {
    await rm(file);
  }
});
