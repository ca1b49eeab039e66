/**
 * @module
 * The public API by audience (docs/architecture.md): every symbol of every entry point has JSDoc
 * with an example (`deno doc --lint` in `deno task check` says none lacks a comment; this says each
 * shows itself in use), `docs/reference.md` is what `deno task docs` writes from them, and
 * `shell/runtime`, the islands' entry, reaches no server code by its own imports — whatever the
 * islands of the day import.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ENTRY_POINTS,
  entryDocs,
  HTML_DIR,
  INDEX_FILE,
  referenceIndex,
} from "../../lib/build/reference.ts";
import { copyProject, PROJECT_ROOT } from "../helpers/project_copy.ts";

Deno.test("every public symbol of every entry point has JSDoc with an example", async () => {
  const docs = await entryDocs(PROJECT_ROOT);
  assert.deepEqual([...docs.keys()].toSorted(), ENTRY_POINTS.map((e) => e.file).toSorted());
  const lacking: string[] = [];
  let symbols = 0;
  for (const [file, module] of docs) {
    assert.ok(module.module_doc?.doc, `${file} says what it is for`);
    for (const symbol of module.symbols) {
      symbols++;
      const shown = symbol.declarations.some((declaration) =>
        declaration.jsDoc?.doc?.trim() &&
        declaration.jsDoc.tags?.some((tag) => tag.kind === "example" && tag.doc?.includes("```"))
      );
      if (!shown) lacking.push(`${file}: ${symbol.name}`);
    }
  }
  assert.ok(symbols > 40, `the entry points' symbols were read: ${symbols}`);
  assert.deepEqual(lacking, []);
});

Deno.test("docs/reference.md is what `deno task docs` writes", async () => {
  const committed = await Deno.readTextFile(join(PROJECT_ROOT, INDEX_FILE));
  assert.equal(committed, await referenceIndex(PROJECT_ROOT), "run `deno task docs`");
});

Deno.test("`deno task docs` works in a fresh clone, before any build made _build/", async () => {
  await using copy = await copyProject({ from: PROJECT_ROOT });
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["task", "docs"],
    cwd: copy.root,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  assert.ok((await Deno.stat(join(copy.root, HTML_DIR, "index.html"))).isFile);
});

interface ModuleInfo {
  specifier: string;
  dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
}

Deno.test("shell/runtime reaches only browser-safe modules", async () => {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "shell/runtime"],
    cwd: PROJECT_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const { modules }: { modules: ModuleInfo[] } = JSON.parse(new TextDecoder().decode(stdout));
  const root = new URL(`file://${PROJECT_ROOT}`).href.replace(/\/?$/, "/");
  const reached = modules.flatMap((module) => [
    module.specifier,
    ...(module.dependencies ?? []).flatMap((dep) => [dep.code?.specifier, dep.type?.specifier]),
  ]).filter((specifier): specifier is string => !!specifier);
  const local = reached.filter((specifier) => specifier.startsWith(root))
    .map((specifier) => specifier.slice(root.length));
  assert.ok(
    local.includes("lib/runtime.ts") && local.includes("lib/shared/recover.ts"),
    `${local}`,
  );
  // Shared modules only, and no package but React and devalue (which islands run on anyway: the
  // runtime decodes their props with it), no built-in or remote module at all.
  assert.deepEqual(
    [...new Set(local)].filter((path) => !/^lib\/(runtime\.ts$|shared\/)/.test(path)),
    [],
  );
  const runtimePackages = /^npm:\/?(react|devalue)@[\d.]+(\/|$)/;
  assert.deepEqual(
    reached.filter((specifier) => !specifier.startsWith(root) && !runtimePackages.test(specifier)),
    [],
  );
});
