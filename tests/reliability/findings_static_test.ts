/**
 * Issue 11, finding 12: what `static/` serves. Names that start with a dot (`.env`, `.well-known/`,
 * a `.hidden` file in a folder) are never served, however the path is spelled; every other file
 * is reachable at its URL-encoded name — a space, a non-ASCII letter (NFC, as browsers encode it),
 * `+`, `%` and `#` included — with its own bytes; and no path reaches outside `static/`.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { requestBytes, send } from "./raw_http.ts";
import { builtTarget, startTarget } from "./target.ts";

const SECRET = "SECRET_ENV=do-not-serve";

const FILES: Record<string, string> = {
  "static/.env": SECRET,
  "static/.well-known/x": `well-known ${SECRET}`,
  "static/sub/.hidden": `hidden ${SECRET}`,
  "static/sub/ok.txt": "ok in a folder",
  "static/my file.txt": "a space",
  "static/caf\u00e9.txt": "an accent, NFC",
  "static/a+b.txt": "a plus",
  "static/100%.txt": "a percent sign",
  "static/a#b.txt": "a hash",
};

const SERVED: [string, string][] = [
  ["/sub/ok.txt", "ok in a folder"],
  ["/my%20file.txt", "a space"],
  ["/caf%C3%A9.txt", "an accent, NFC"],
  ["/caf%c3%a9.txt", "an accent, NFC"],
  ["/a+b.txt", "a plus"],
  ["/a%2Bb.txt", "a plus"],
  ["/100%25.txt", "a percent sign"],
  ["/a%23b.txt", "a hash"],
];

const HIDDEN = ["/.env", "/.well-known/x", "/sub/.hidden"];

/** Other spellings of hidden files, and ways out of `static/`: none may answer with them. */
const SNEAKY = [
  "/%2Eenv",
  "/%2eenv",
  "/.env%00",
  "/.env/",
  "/.env.",
  "/./.env",
  "/sub/../.env",
  "/sub/%2E%2E/.env",
  "/sub/..%2F.env",
  "/sub/..%2f.env",
  "/sub%2F.hidden",
  "/sub%2f%2ehidden",
  "/sub/..%5C.env",
  "/%2Ewell-known/x",
  "/.well-known%2Fx",
  "/..%2Fdeno.json",
  "/%2E%2E%2Fdeno.json",
  "/sub/..%2F..%2Fdeno.json",
  "/..%252Fdeno.json",
  "/my%20file.txt/..%2F.env",
];

Deno.test("finding 12: static files by their encoded names, never dotfiles, never outside", async (t) => {
  const built = await builtTarget(FILES);
  await using server = await startTarget({}, { root: built.root });
  const get = (target: string, method = "GET") =>
    send(server.port, requestBytes(server.port, { method, target }));

  await t.step("named with a space, a non-ASCII letter, +, % or #: 200, its bytes", async () => {
    for (const [target, text] of SERVED) {
      const res = await get(target);
      assert.equal(res.status, 200, target);
      assert.equal(res.body, text, target);
    }
  });

  await t.step("a name starting with a dot: 404", async () => {
    for (const target of HIDDEN) {
      for (const method of ["GET", "HEAD"]) {
        const res = await get(target, method);
        assert.equal(res.status, 404, `${method} ${target}`);
        assert.ok(!res.body.includes(SECRET), `${method} ${target}`);
      }
    }
  });

  await t.step("other spellings and traversals: never a hidden file or one outside", async () => {
    for (const target of SNEAKY) {
      const res = await get(target);
      assert.ok(res.status > 0 && res.status < 500, `${target}: status ${res.status}`);
      assert.ok(!res.body.includes(SECRET), `${target} served a dotfile`);
      assert.ok(!res.body.includes('"nodeModulesDir"'), `${target} served deno.json`);
    }
  });
});

/** The server's open file descriptors that are `file` (its `/proc/<pid>/fd` links to it). */
function descriptorsOf(pid: number, file: string): number {
  let n = 0;
  for (const entry of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      if (Deno.readLinkSync(`/proc/${pid}/fd/${entry.name}`) === file) n++;
    } catch { /* closed meanwhile */ }
  }
  return n;
}

Deno.test("attack 12: a static file's descriptor is let go when its body is not sent", async (t) => {
  const built = await builtTarget(FILES);
  await using server = await startTarget({}, { root: built.root });
  const assets = join(built.root, "_build/static");
  // A built asset with a brotli copy beside it: the original is what a browser never gets.
  const asset = [...Deno.readDirSync(assets)].map((e) => e.name)
    .find((name) => name.endsWith(".js") && existsSync(join(assets, `${name}.br`)));
  assert.ok(asset, "the build made no precompressed asset");
  const N = 200;

  await t.step(
    "HEAD of a file: its descriptor is closed, not kept until a collection",
    async () => {
      for (let i = 0; i < N; i++) {
        const res = await server.fetch("/sub/ok.txt", { method: "HEAD" });
        assert.equal(res.status, 200);
        await res.body?.cancel();
      }
      // Before: 200 (one per request), held until V8 happened to collect their streams.
      const held = descriptorsOf(server.pid, join(built.root, "static/sub/ok.txt"));
      assert.ok(held < 5, `${held} descriptors of the file held after ${N} HEAD requests`);
    },
  );

  await t.step("a compressed copy served: the original's descriptor is closed", async () => {
    for (let i = 0; i < N; i++) {
      const res = await server.fetch(`/_app/${asset}`, { headers: { "accept-encoding": "br" } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-encoding"), "br");
      await res.arrayBuffer();
    }
    // Before: 200 - Hono's serveStatic opened the original, then served the copy instead.
    const held = descriptorsOf(server.pid, join(assets, asset!));
    assert.ok(held < 5, `${held} descriptors of ${asset} held after ${N} compressed GETs`);
  });
});
