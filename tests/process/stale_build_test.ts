/**
 * @module
 * The start's staleness check asked of a child process (`lib/cli/stale_build.ts`), a real one:
 * what the check throws reaches the start as it was thrown - its message, name, system `code` and
 * the stack of where it failed - not as an `Error` wrapping the child's stack in its message
 * ("Error: Error: EISDIR ..." pointing at the code that received the answer); and a check that
 * cannot even load fails the start with that error, not a hang.
 */
import assert from "node:assert/strict";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildDir } from "../../lib/build/fingerprint.ts";
import { SERVER_DIR } from "../../lib/build/server_bundle.ts";
import { isStaleApart } from "../../lib/cli/stale_build.ts";

Deno.test("a tree never built is stale, answered by the child process", async () => {
  const root = await mkdtemp(join(tmpdir(), "stale-build-"));
  try {
    await Deno.writeTextFile(join(root, "deno.json"), "{}\n");
    assert.equal(await isStaleApart(root, false), true);
  } finally {
    await rm(root, { recursive: true });
  }
});

Deno.test("what the check throws reaches the start as it was thrown", async () => {
  const root = await mkdtemp(join(tmpdir(), "stale-build-"));
  try {
    // The last build's fingerprint unreadable: a directory where the file should be. (With its
    // server bundle, or the check answers "stale" before it reads the fingerprint.)
    await mkdir(join(root, buildDir(false), "fingerprint"), { recursive: true });
    await mkdir(join(root, SERVER_DIR), { recursive: true });
    await Deno.writeTextFile(join(root, SERVER_DIR, "serve.js"), "");
    await assert.rejects(isStaleApart(root, false), (error: Error & { code?: string }) => {
      assert.match(error.message, /^EISDIR: /);
      assert.equal(error.code, "EISDIR");
      assert.equal(error.name, "Error");
      assert.doesNotMatch(error.stack ?? "", /stale_build\.ts/, "the child's stack, not ours");
      assert.match(error.stack ?? "", /^Error: EISDIR: /);
      return true;
    });
  } finally {
    await rm(root, { recursive: true });
  }
});

Deno.test("a check that cannot even load fails the start with its error, not a hang", async () => {
  // The two modules of the check beside a fingerprint module that throws as it loads, in a folder
  // whose name has a space (the child is given a path, not a percent-encoded URL).
  const copy = await mkdtemp(join(tmpdir(), "stale build lib-"));
  try {
    await mkdir(join(copy, "cli"));
    await mkdir(join(copy, "build"));
    for (const file of ["stale_build.ts", "stale_build_check.ts"]) {
      await copyFile(new URL(`../../lib/cli/${file}`, import.meta.url), join(copy, "cli", file));
    }
    await Deno.writeTextFile(
      join(copy, "build", "fingerprint.ts"),
      `throw new Error("the fingerprint failed to load");\nexport const isStale = (_root: string, _dev: boolean) => Promise.resolve(false);\n`,
    );
    const { isStaleApart: apart } = await import(
      pathToFileURL(join(copy, "cli", "stale_build.ts")).href
    ) as typeof import("../../lib/cli/stale_build.ts");
    await assert.rejects(apart(copy, false), /the fingerprint failed to load/);
  } finally {
    await rm(copy, { recursive: true });
  }
});
