/**
 * @module
 * `builtCopy` keys a built copy by what it is made of, not by where its tree is: the nested
 * `.ci/run`s of clean_start_test.ts, each in a copy of the project elsewhere, find the fifty copies
 * the run before them built instead of building them again, also where the example's stylesheets
 * are gone from deno.json (the build writes a copy's own). Another byte anywhere in the tree still
 * makes another copy, and a copy a run just used is never removed as stale under it. A copy
 * outlives the tree that built it: a server starts in it for the same sources elsewhere.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withEntries } from "../../lib/build/styles/deno_json.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { copyProject, PROJECT_ROOT } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";

Deno.test("one built copy for the same sources in two places; another byte makes another", async () => {
  await using first = await copyProject();
  const second = await Deno.makeTempDir({ prefix: "app-copy-" });
  const made: string[] = [];
  try {
    const cp = await new Deno.Command("cp", { args: ["-R", `${first.root}/.`, second] }).output();
    assert.ok(cp.success, "copied");
    const name = `built-copy-test-${crypto.randomUUID().slice(0, 8)}`;

    const here = await builtCopy(name, {}, { from: first.root });
    made.push(here);
    // A stylesheet's entry in deno.json, as a project's build writes it: the copy's build writes
    // its own, so the copy is the same.
    const config = join(second, "deno.json");
    const styled = withEntries(
      await Deno.readTextFile(config),
      new Map([["./gone.css", "gone.css"]]),
    );
    assert.match(styled, /"\.\/gone\.css": "\.\/_build\/css\/gone\.css\.ts"/);
    await Deno.writeTextFile(config, styled);
    assert.equal(await builtCopy(name, {}, { from: second }), here, "the same sources elsewhere");

    // Used long after it was built: marked as used now, so another variant's build keeps it.
    const ready = join(here, ".ready");
    const long = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await Deno.utime(ready, long, long);
    assert.equal(await builtCopy(name, {}, { from: first.root }), here);
    const used = (await Deno.stat(ready)).mtime!.getTime();
    assert.ok(Date.now() - used < 60_000, `last used ${new Date(used).toISOString()}`);

    await Deno.writeTextFile(join(second, "probe.txt"), "another byte");
    const other = await builtCopy(name, {}, { from: second });
    made.push(other);
    assert.notEqual(other, here, "a tree that differs builds its own");
    assert.ok((await Deno.stat(ready)).isFile, "the copy in use is still there");
  } finally {
    for (const root of [second, ...made]) await Deno.remove(root, { recursive: true });
  }
});

// A clean clone's `.ci/run` built a copy and was removed; the next run (CI's own, with the same
// commit) found the copy and every server in it died at start: its `node_modules` linked to the
// first clone's, which linked on to the packages.
Deno.test("a built copy still starts once the tree that built it is gone", async () => {
  const first = await copyProject();
  const second = await Deno.makeTempDir({ prefix: "app-copy-" });
  const name = `built-copy-gone-${crypto.randomUUID().slice(0, 8)}`;
  let built: string | undefined;
  try {
    const cp = await new Deno.Command("cp", { args: ["-R", `${first.root}/.`, second] }).output();
    assert.ok(cp.success, "copied");
    built = await builtCopy(name, {}, { from: first.root });
    await Deno.remove(first.root, { recursive: true });

    assert.equal(await builtCopy(name, {}, { from: second }), built, "the same sources elsewhere");
    const packages = await Deno.realPath(join(PROJECT_ROOT, "node_modules"));
    assert.equal(await Deno.realPath(join(built, "node_modules")), packages);
    await using server = await startServer({}, { root: built });
    const res = await server.fetch("/");
    await res.body?.cancel();
    assert.equal(res.status, 200);
  } finally {
    for (const root of [first.root, second, built]) {
      if (root) await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  }
});
