/**
 * @module
 * Finds the server actions: modules under `lib/` or `routes/` whose first statement is
 * `"use server";`. Every export of one must be an async function; each becomes an action with an
 * id made of its module's path and its name alone, keyed with the project's salt (`salt.ts`): the
 * same in every build, whatever the module's code became, so a tab opened before a deploy still
 * calls it; and it says nothing about where the action lives. Never keyed with the source: an edit
 * would rename every action of the module. esbuild lists the exports and prints the module in one
 * normal form - declarations, then a single `export { ... }` - which is what the async check reads.
 */
import * as esbuild from "esbuild";
import { createHmac } from "node:crypto";
import { join, relative } from "node:path";
import { filesBelow } from "./files.ts";
import { BuildProblem } from "./problem.ts";
import { projectSalt } from "./salt.ts";

export interface ActionExport {
  /** The export's name (`default` for the default export). */
  name: string;
  id: string;
}

export interface ActionModule {
  /** Path relative to the project root, with `/` separators. */
  file: string;
  exports: ActionExport[];
}

const FOLDERS = ["lib", "routes"];
const SOURCE = /\.(ts|tsx|mts|js|jsx|mjs)$/;
// Comments and blank lines may come first; the directive must be the first statement.
const USE_SERVER = /^(?:\s|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*(["'])use server\1\s*(?:;|\n|$)/;

export function isServerModule(source: string): boolean {
  return USE_SERVER.test(source);
}

/** The id of the export `name` of the module `file` (from the project root), keyed with `salt`. */
export function actionId(file: string, name: string, salt: string): string {
  return createHmac("sha256", salt).update(`${file}#${name}`).digest("base64url").slice(0, 20);
}

export async function scanActions(root: string): Promise<ActionModule[]> {
  const modules: string[] = [];
  for (const folder of FOLDERS) {
    for (const file of await sourceFiles(root, folder)) {
      const source = await Deno.readTextFile(join(root, file));
      if (isServerModule(source)) modules.push(file);
    }
  }
  if (modules.length === 0) return [];
  const salt = await projectSalt(root);

  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: modules,
    outdir: "_actions",
    bundle: false,
    write: false,
    metafile: true,
    format: "esm",
    jsx: "automatic",
    logLevel: "silent",
  });
  const texts = new Map(result.outputFiles.map((out) => [relative(root, out.path), out.text]));
  return Object.entries(result.metafile.outputs)
    .filter(([, output]) => output.entryPoint)
    .map(([path, output]) => {
      const file = output.entryPoint!;
      const asyncExports = asyncExportsOf(texts.get(path)!);
      const exports = output.exports.map((name) => {
        if (!asyncExports.has(name)) {
          throw new BuildProblem(
            `${file}: export "${name}" of a "use server" module must be an async function ` +
              `declared in the module (\`export async function ${name}(\u2026)\`)`,
          );
        }
        return { name, id: actionId(file, name, salt) };
      });
      return { file, exports };
    })
    .sort((a, b) => a.file < b.file ? -1 : 1);
}

const ASYNC_DECLARATION =
  /^(?:async function ([\w$]+)\s*\(|(?:const|let|var) ([\w$]+) = async\b)/gm;
const EXPORT_CLAUSE = /^export \{([^}]*)\};?$/m;

/** Names exported as async functions, read from esbuild's normal form of a module. */
function asyncExportsOf(code: string): Set<string> {
  const asyncLocals = new Set<string>();
  for (const match of code.matchAll(ASYNC_DECLARATION)) asyncLocals.add(match[1] ?? match[2]);
  const clause = EXPORT_CLAUSE.exec(code)?.[1] ?? "";
  const names = new Set<string>();
  for (const item of clause.split(",")) {
    const [local, exported = local] = item.trim().split(/\s+as\s+/);
    if (local && asyncLocals.has(local)) names.add(exported);
  }
  return names;
}

async function sourceFiles(root: string, folder: string): Promise<string[]> {
  const files = await filesBelow(join(root, folder));
  return files.filter((file) => SOURCE.test(file)).map((file) => `${folder}/${file}`);
}
