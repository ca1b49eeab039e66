/**
 * @module
 * The start's staleness check (`isStale`, `lib/build/fingerprint.ts`) sees a server bundle that is
 * no longer the one its build wrote (`lib/build/bundle_record.ts`), and a build that did not end:
 * `deno task start` then rebuilds, where it loaded what it found - a `serve.js` cut short failed
 * the start with a `SyntaxError`; a lazy chunk deleted answered 500 at every action post
 * (`Module not found .../read_call-*.js`); a source map of another build gave failures' stacks,
 * and so their digests, the wrong lines.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { build } from "../../lib/build/mod.ts";
import { isStale } from "../../lib/build/fingerprint.ts";
import { SERVER_DIR } from "../../lib/build/server_bundle.ts";
import { copyProject } from "../helpers/project_copy.ts";

/** Runs `damage` on the file of the bundle named by `pick`, asks the check, then puts it back. */
async function staleAfter(
  root: string,
  pick: (name: string) => boolean,
  damage: (path: string, bytes: Uint8Array) => Promise<void>,
): Promise<boolean> {
  const dir = join(root, SERVER_DIR);
  const name = [...Deno.readDirSync(dir)].map((entry) => entry.name).find(pick);
  assert.ok(name, "the bundle has such a file");
  const path = join(dir, name);
  const bytes = await Deno.readFile(path);
  try {
    await damage(path, bytes);
    return await isStale(root, false);
  } finally {
    await Deno.writeFile(path, bytes);
  }
}

Deno.test("a server bundle changed since its build is stale: the start rebuilds it", async () => {
  await using copy = await copyProject();
  const { root } = copy;
  await build({ root, dev: false });
  assert.equal(await isStale(root, false), false, "fresh as built");

  const cutShort = (path: string, bytes: Uint8Array) =>
    Deno.writeFile(path, bytes.subarray(0, bytes.length >> 1));
  assert.equal(await staleAfter(root, (n) => n === "serve.js", cutShort), true, "serve.js cut");
  assert.equal(
    await staleAfter(root, (n) => /^read_call-\w+\.js$/.test(n), (path) => Deno.remove(path)),
    true,
    "a lazy chunk deleted",
  );
  // Garbage of the same size: the content is compared, not only the size.
  const garbage = (path: string, bytes: Uint8Array) =>
    Deno.writeFile(path, new Uint8Array(bytes.length).fill(0x7b));
  assert.equal(
    await staleAfter(root, (n) => /^chunk-\w+\.js\.map$/.test(n), garbage),
    true,
    "a source map replaced",
  );
  assert.equal(await isStale(root, false), false, "fresh again once put back");
});

Deno.test("a build killed once it began writing leaves the build stale", async () => {
  await using copy = await copyProject();
  const { root } = copy;
  await build({ root, dev: false });
  assert.equal(await isStale(root, false), false, "fresh as built");

  // The same sources built again, killed at its first write to what the server serves.
  const watcher = Deno.watchFs([join(root, "_build/static"), join(root, SERVER_DIR)]);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(root, "lib/cli/build.ts")],
    cwd: root,
    env: { NODE_ENV: "production" },
    stdout: "null",
    stderr: "null",
  }).spawn();
  // A child that ends by itself (it failed, or wrote nothing we saw) ends the wait too.
  const ended = child.status.then((status) => {
    try {
      watcher.close();
    } catch { /* closed already */ }
    return status;
  });
  for await (const event of watcher) {
    if (event.kind === "create" || event.kind === "modify") break;
  }
  try {
    child.kill("SIGKILL");
  } catch { /* it ended already */ }
  assert.equal((await ended).signal, "SIGKILL", "killed half-way, not ended");
  assert.equal(await isStale(root, false), true, "the next start rebuilds");
});
