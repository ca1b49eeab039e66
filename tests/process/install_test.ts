/**
 * @module
 * A fresh machine's first install (no `node_modules` yet) prints no "Ignored build scripts"
 * warning: `@sentry/cli`'s `postinstall` only fetches its binary again, which Deno installs from
 * the per-platform package anyway, so `deno.json` declines the script — and `sentry-cli` still
 * runs for `deno task sentry:sourcemaps`. The packages come from Deno's cache: nothing is
 * downloaded.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { PROJECT_ROOT } from "../helpers/project_copy.ts";

Deno.test("a first install warns of no ignored build scripts; sentry-cli runs", async () => {
  const root = await Deno.makeTempDir({ prefix: "fresh-install-" });
  try {
    for (const file of ["deno.json", "deno.lock", "lib/build/sentry_cli.ts"]) {
      await Deno.mkdir(join(root, file, ".."), { recursive: true });
      await Deno.copyFile(join(PROJECT_ROOT, file), join(root, file));
    }
    const deno = (...args: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args,
        cwd: root,
        env: { NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();

    const install = await deno("install");
    const said = new TextDecoder().decode(install.stderr);
    assert.equal(install.code, 0, said);
    assert.match(said, /Installed \d+ packages/, "it did install");
    assert.doesNotMatch(said, /Ignored build scripts|approve-scripts/);

    const script = `import { sentryCliPath } from "./lib/build/sentry_cli.ts";
const { code, stdout } = await new Deno.Command(sentryCliPath(), { args: ["--version"] }).output();
console.log(code, new TextDecoder().decode(stdout).trim());`;
    const run = await deno("eval", "--ext=ts", script);
    assert.match(new TextDecoder().decode(run.stdout).trim(), /^0 sentry-cli \d+\.\d+\.\d+$/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
