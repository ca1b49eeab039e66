/**
 * @module
 * What a rebuild of the browser side means for the open pages: the islands whose chunks changed,
 * each with its new URL and the changed sources it evaluates anew - for the dev client to swap in
 * place - or why the pages must reload instead (the boot runtime or the Sentry SDK changed).
 * Content-hashed names make this a comparison of output paths: an unchanged chunk keeps its name,
 * and the browser its instance.
 */
import type * as esbuild from "esbuild";
import { assetUrl } from "../build/bundle.ts";
import type { Update } from "../client/dev/protocol.ts";

export type Plan = { reload: string } | { update: Omit<Update, "version"> };

export function planUpdate(
  previous: esbuild.Metafile,
  next: esbuild.Metafile,
  islands: Map<string, string>,
  changed: string[],
  outDir: string,
): Plan {
  const before = entriesOf(previous);
  const after = entriesOf(next);
  const islandFiles = new Set(islands.values());
  for (const [entry, output] of after) {
    if (!islandFiles.has(entry) && before.get(entry) !== output) {
      return { reload: `${entry} changed` };
    }
  }
  const updates: Update["islands"] = {};
  for (const [name, file] of islands) {
    const output = after.get(file)!;
    if (before.get(file) === output) continue;
    const files = [...newSources(next, previous, output)].filter((s) => changed.includes(s));
    updates[name] = { url: assetUrl(output, outDir), files };
  }
  return { update: { islands: updates } };
}

function entriesOf(metafile: esbuild.Metafile): Map<string, string> {
  const entries = new Map<string, string>();
  for (const [path, output] of Object.entries(metafile.outputs)) {
    if (output.entryPoint) entries.set(output.entryPoint, path);
  }
  return entries;
}

/** The sources in `output` and the chunks it imports that `previous` did not have. */
function newSources(next: esbuild.Metafile, previous: esbuild.Metafile, output: string) {
  const sources = new Set<string>();
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    if (!(path in previous.outputs)) {
      for (const input of Object.keys(next.outputs[path].inputs)) sources.add(input);
    }
    for (const dep of next.outputs[path].imports) {
      if (dep.kind === "import-statement" && !dep.external) visit(dep.path);
    }
  };
  visit(output);
  return sources;
}
