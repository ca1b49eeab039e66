/**
 * @module
 * An app made from a manifest lists `routes/` and `islands/` to warn of modules its build has not
 * seen (`lib/server/build_sources.ts`) - only where it may read them. Started at a terminal with
 * `--allow-read` narrower than the project (`_build/` and `static/`, what it serves), the listing
 * asked Deno for read access to `routes/`, and the start waited on that prompt for an answer.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PROJECT_ROOT } from "../helpers/project_copy.ts";

const PROBE = `import { createApp } from ${
  JSON.stringify(import.meta.resolve("../../lib/server.ts"))
};
import { memoryManifest } from ${JSON.stringify(import.meta.resolve("../helpers/app.ts"))};
const manifest = {
  ...memoryManifest({ routes: { "index.tsx": { default: () => null } } }),
  buildId: "older",
  sources: [],
};
createApp(manifest, { root: Deno.args[0] });
console.log("made");
`;

Deno.test("an app not allowed to read routes/ asks no question at a terminal: it says nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const root = join(dir, "project");
    await Deno.mkdir(join(root, "routes"), { recursive: true });
    await Deno.writeTextFile(join(root, "routes/index.tsx"), "export default () => null;\n");
    const probe = join(dir, "probe.ts");
    await Deno.writeTextFile(probe, PROBE);
    const deno = [
      Deno.execPath(),
      "run",
      `--config=${join(PROJECT_ROOT, "deno.json")}`,
      "--allow-env",
      "--allow-net",
      "--allow-sys",
      `--allow-read=${PROJECT_ROOT},${probe},${join(root, "_build")},${join(root, "static")}`,
      pathToFileURL(probe).href,
      root,
    ].map((arg) => `'${arg}'`).join(" ");
    // `script` gives it a pseudo-terminal, where Deno asks for a permission rather than refusing.
    const child = new Deno.Command("script", {
      args: ["-qfec", deno, "/dev/null"],
      env: { NODE_ENV: "production" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // A bound, not a wait: a probe that neither asks nor answers ends the read.
    const bound = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let shown = "";
    try {
      while (!/made|Deno requests/.test(shown)) {
        const { value, done } = await reader.read();
        if (done) break;
        shown += value;
      }
    } finally {
      // Before: waiting on the prompt for good.
      if (!shown.includes("made")) child.kill("SIGKILL");
      await child.stdin.close().catch(() => {});
      await reader.cancel();
      await child.stderr.cancel();
      await child.status;
      clearTimeout(bound);
    }
    assert.doesNotMatch(shown, /Deno requests/, `a permission prompt: ${shown}`);
    assert.match(shown, /made/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
