/**
 * @module
 * The list of the example's files (`tests/example/files.json`, what `deno task example:remove`
 * removes) is complete: every path it names exists; every module or stylesheet an example file
 * imports from `routes/`, `islands/`, `components/` or `static/` is listed too (else it would be
 * left behind; Deno sees an imported stylesheet as the module the build made of it in
 * `_build/css/`); no other module there imports an example file (else it would break once the
 * example is gone); and every page the example's home page lists is served by a listed route file.
 * A team's own files — a middleware, an island, a component, pages of its own — are none of the
 * example's business and are left alone; so are the imports of the files a team makes its own on
 * its first day (the document, the root layout, the home page, the not-found page): what they
 * import then is the team's. Module graphs are Deno's own (`deno info --json`). Goes with the
 * example.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Hono } from "hono";
import { filesBelow } from "../../../lib/build/files.ts";
import { isRouteFile, patternFor } from "../../../lib/build/conventions.ts";
import { MODULES_DIR as STYLE_MODULES } from "../../../lib/build/styles/plan.ts";
import { exampleFiles, MINIMAL_APP } from "../../../lib/cli/remove_example.ts";
import { EXAMPLES } from "../../../routes/_examples.ts";
import { PROJECT_ROOT } from "../../helpers/project_copy.ts";

const APP_FOLDERS = ["routes", "islands", "components", "static"];
/** The example's files a team changes on day one: what they import may be the team's. */
const TEAMS_OWN = new Set([...Object.keys(MINIMAL_APP), "routes/_layout.tsx"]);
const listed = (await exampleFiles(PROJECT_ROOT))!;
const isListed = (file: string) =>
  listed.some((entry) => entry.endsWith("/") ? file.startsWith(entry) : file === entry);

/** Every file of the app's folders, from the project root. */
async function appFiles(): Promise<string[]> {
  const all = await Promise.all(
    APP_FOLDERS.map(async (folder) =>
      (await filesBelow(join(PROJECT_ROOT, folder))).map((file) => `${folder}/${file}`)
    ),
  );
  return all.flat();
}

/** Each local module's imports (files below the project root), from `deno info --json`. */
async function importsOf(files: string[]): Promise<Map<string, string[]>> {
  // One root that imports them all: `deno info` takes one module.
  const dir = await Deno.makeTempDir({ prefix: "example-graph-" });
  const entry = join(dir, "all.ts");
  const urls = files.map((file) => pathToFileURL(join(PROJECT_ROOT, file)).href);
  await Deno.writeTextFile(entry, urls.map((url) => `import ${JSON.stringify(url)};`).join("\n"));
  const { stdout, stderr, success } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", join(PROJECT_ROOT, "deno.json"), entry],
    cwd: PROJECT_ROOT,
  }).output().finally(() => Deno.remove(dir, { recursive: true }));
  assert.ok(success, `deno info failed: ${new TextDecoder().decode(stderr)}`);
  const graph = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: { specifier: string; dependencies?: { code?: { specifier: string } }[] }[];
  };
  const root = pathToFileURL(PROJECT_ROOT).href.replace(/\/?$/, "/");
  // An imported stylesheet resolves (deno.json's entry) to the module the build made of it: the
  // stylesheet is what the import names.
  const local = (url: string) => {
    if (!url.startsWith(root)) return undefined;
    const file = decodeURIComponent(url.slice(root.length));
    return file.startsWith(`${STYLE_MODULES}/`) && file.endsWith(".css.ts")
      ? file.slice(STYLE_MODULES.length + 1, -".ts".length)
      : file;
  };
  const imports = new Map<string, string[]>();
  for (const module of graph.modules) {
    const file = local(module.specifier);
    if (!file) continue;
    const deps = (module.dependencies ?? []).flatMap((dep) => {
      const target = dep.code?.specifier && local(dep.code.specifier);
      return target ? [target] : [];
    });
    imports.set(file, deps);
  }
  return imports;
}

Deno.test("every path the example's list names exists", async () => {
  const missing = [];
  for (const entry of listed) {
    const info = await Deno.stat(join(PROJECT_ROOT, entry)).catch(() => undefined);
    if (!info || info.isDirectory !== entry.endsWith("/")) missing.push(entry);
  }
  assert.deepEqual(missing, []);
});

Deno.test("the list holds what the example imports, and nothing else imports the example", async () => {
  const files = (await appFiles()).filter((file) => /\.(tsx?|jsx?)$/.test(file));
  const imports = await importsOf(files);
  const inApp = (file: string) => APP_FOLDERS.some((folder) => file.startsWith(`${folder}/`));
  const leftBehind: string[] = [];
  const breaking: string[] = [];
  for (const [file, deps] of imports) {
    if (!inApp(file)) continue;
    for (const dep of deps.filter(inApp)) {
      if (isListed(file) && !TEAMS_OWN.has(file) && !isListed(dep)) {
        leftBehind.push(`${file} imports ${dep}`);
      }
      if (!isListed(file) && isListed(dep)) breaking.push(`${file} imports ${dep}`);
    }
  }
  assert.deepEqual(leftBehind, [], "example files import files the list does not name");
  assert.deepEqual(breaking, [], "files that are not the example's import the example");
  // The check can fail: the example's own imports are in the graph, its stylesheets too.
  assert.ok(imports.get("islands/Guestbook.tsx")?.includes("routes/_guestbook/actions.ts"));
  assert.ok(imports.get("islands/Counter.tsx")?.includes("islands/Counter.module.css"));
});

Deno.test("every page the example's home page lists is served by a listed route file", async () => {
  const router = new Hono();
  for (const file of await filesBelow(join(PROJECT_ROOT, "routes"))) {
    if (isRouteFile(file)) router.all(patternFor(file), (c) => c.text(`routes/${file}`));
  }
  const unlisted: string[] = [];
  for (const [href] of EXAMPLES) {
    const res = await router.request(href);
    const file = await res.text();
    assert.equal(res.status, 200, `no route serves ${href}`);
    if (!isListed(file)) unlisted.push(`${href} (${file})`);
  }
  assert.deepEqual(unlisted, []);
});
