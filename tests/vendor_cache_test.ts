/**
 * @module
 * What `cachedBuild` (`lib/build/vendor_cache.ts`) clears when it stores a build: the older
 * entries of its name, and temporary folders old enough to be a dead session's - never a fresh
 * one, which another session may still be writing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { cachedBuild } from "../lib/build/vendor_cache.ts";
import { tempDir } from "./helpers/temp_dir.ts";

Deno.test("storing a build clears older entries and dead sessions' leftovers only", async () => {
  await using dir = await tempDir("vendor-cache-");
  const root = dir.path;
  const cache = join(root, "cache");
  const older = "bundle-0123456789abcdef";
  const fresh = `bundle-0123456789abcdef.${crypto.randomUUID()}`;
  const dead = `bundle-0123456789abcdef.${crypto.randomUUID()}`;
  const other = "other-0123456789abcdef";
  for (const entry of [older, fresh, dead, other]) {
    await Deno.mkdir(join(cache, entry), { recursive: true });
    await Deno.writeTextFile(join(cache, entry, "a.js"), "");
  }
  const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
  await Deno.utime(join(cache, dead), twoHoursAgo, twoHoursAgo);

  const outdir = join(root, "out");
  await cachedBuild(
    { root, folder: "cache", name: "bundle", sources: [], outdir },
    () => Promise.resolve([{ path: join(outdir, "a.js"), contents: new Uint8Array([1]) }]),
  );

  const left = (await Array.fromAsync(Deno.readDir(cache), (e) => e.name)).sort();
  assert.equal(left.length, 3, `left: ${left}`);
  assert.ok(left.includes(fresh), "a fresh temporary folder stays: its session may be writing it");
  assert.ok(left.includes(other), "another name's entry stays");
  assert.ok(!left.includes(older) && !left.includes(dead), `left: ${left}`);
});

Deno.test("a session whose entry another key's session removes while it reads builds it", async () => {
  await using dir = await tempDir("vendor-cache-keys-");
  const root = dir.path;
  const outdir = join(root, "out");
  const files = 200;
  // Two sessions of one project with different sources (a dev server and a build of an edited
  // checkout): each stores its key and removes the other's, often while that one reads it.
  const session = async (source: string) => {
    await Deno.writeTextFile(join(root, source), source);
    for (let round = 0; round < 50; round++) {
      const outputs = await cachedBuild(
        { root, folder: "cache", name: "bundle", sources: [source], outdir },
        () =>
          Promise.resolve(Array.from({ length: files }, (_, i) => ({
            path: join(outdir, `file${i}.js`),
            contents: new TextEncoder().encode(`${source} ${i}`),
          }))),
      );
      assert.equal(outputs.length, files);
    }
  };
  await Promise.all([session("a.txt"), session("b.txt")]);
});
