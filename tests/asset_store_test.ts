/**
 * @module
 * Earlier builds' assets in Deno KV (`lib/kv/asset_store.ts`, `lib/server/kept_assets.ts`),
 * in-process on real stores (in memory, or a SQLite file that several handles share as
 * `deno serve --parallel` workers do): files split into parts under KV's value limit and read back
 * whole; a build written once, by one of many writers at once, a single read after that; expiry;
 * the bound on bytes, the oldest build going first and what newer builds share staying; and what
 * the app serves from there — only hashed asset names, gzip or not, never a listing.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { gunzipSync, gzipSync } from "node:zlib";
import { type AssetFile, keepAssets, PART_BYTES, readAsset } from "../lib/kv/asset_store.ts";
import { MAX_VALUE_BYTES, valueSize } from "../lib/kv/limits.ts";
import { keepBuildAssets } from "../lib/server/kept_assets.ts";
import { createApp } from "../lib/server.ts";
import { fixtureBuild, memoryManifest, serveApp } from "./helpers/app.ts";
import { tempStore } from "./helpers/kv.ts";
import { FIXTURE_ROOT } from "./helpers/project_copy.ts";

const DAY = 24 * 60 * 60 * 1000;
const ROOMY = { ms: DAY, maxBytes: 64 * 1024 * 1024 };

/** Bytes that do not compress: their gzip is as large as they are, parts and all. */
function noise(bytes: number, seed = 1): Uint8Array {
  const out = new Uint8Array(bytes);
  let x = seed * 2654435761;
  for (let i = 0; i < bytes; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

function file(url: string, content: Uint8Array | string): AssetFile {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  return { url, gzipped: () => Promise.resolve(gzipSync(bytes)) };
}

async function contentOf(kv: Deno.Kv, url: string): Promise<Uint8Array | undefined> {
  const asset = await readAsset(kv, url);
  if (!asset) return undefined;
  return new Uint8Array(gunzipSync(new Uint8Array(await new Response(asset.body).arrayBuffer())));
}

/** `kv`, counting the calls made on it by method. */
function counted(kv: Deno.Kv): { kv: Deno.Kv; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(kv, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return value.apply(target, args);
      };
    },
  });
  return { kv: proxy, calls };
}

Deno.test("a file larger than a KV value is split into parts and read back whole", async () => {
  using kv = await Deno.openKv(":memory:");
  const big = noise(3 * PART_BYTES + 1234);
  const result = await keepAssets(kv, "b1", [file("/_app/big-AAAAAAAA.js", big)], ROOMY);
  assert.equal(result.done, "now");
  const asset = await readAsset(kv, "/_app/big-AAAAAAAA.js");
  assert.ok(asset);
  assert.ok(asset.parts >= 4, `${asset.parts} parts`);
  await asset.body.cancel();
  assert.deepEqual(await contentOf(kv, "/_app/big-AAAAAAAA.js"), big);
  for await (const entry of kv.list({ prefix: ["_assets"] })) {
    assert.ok(valueSize(entry.value) <= MAX_VALUE_BYTES, `${entry.key.join("/")} too large`);
  }
  // Ten parts per read at most: past the first batch, the stream reads as it goes.
  const huge = noise(25 * PART_BYTES, 2);
  await keepAssets(kv, "b2", [file("/_app/huge-BBBBBBBB.js", huge)], ROOMY);
  assert.deepEqual(await contentOf(kv, "/_app/huge-BBBBBBBB.js"), huge);
  assert.equal(await readAsset(kv, "/_app/none-CCCCCCCC.js"), undefined);
});

Deno.test("a build is written once; after that, a start costs one read", async () => {
  using store = await Deno.openKv(":memory:");
  const files = [file("/_app/a-AAAAAAAA.js", "a"), file("/_app/b-BBBBBBBB.js", "b")];
  assert.equal((await keepAssets(store, "b1", files, ROOMY)).done, "now");
  const { kv, calls } = counted(store);
  assert.deepEqual(await keepAssets(kv, "b1", files, ROOMY), { done: "already" });
  assert.deepEqual(calls, ["get"]);

  // A new build sharing a file writes only its own.
  const next = [file("/_app/a-AAAAAAAA.js", "a"), file("/_app/c-CCCCCCCC.js", "c")];
  const result = await keepAssets(store, "b2", next, ROOMY);
  assert.equal(result.done === "now" && result.written, 1);
});

Deno.test("many writers at once, as workers and instances start: one writes, all agree", async () => {
  await using store = await tempStore();
  const stores = await Promise.all(Array.from({ length: 8 }, () => Deno.openKv(store.path)));
  try {
    const shared = noise(2 * PART_BYTES, 3);
    const build = (n: number) => [
      file("/_app/shared-SSSSSSSS.js", shared),
      file(`/_app/own${n}-${"O".repeat(7)}${n}.js`, noise(PART_BYTES, 10 + n)),
    ];
    // Six workers of build 1, and two of build 2 starting beside them.
    const results = await Promise.all(
      stores.map((kv, i) => keepAssets(kv, i < 6 ? "b1" : "b2", build(i < 6 ? 1 : 2), ROOMY)),
    );
    const writers = (id: number) =>
      results.filter((r, i) => (i < 6 ? 1 : 2) === id && r.done === "now").length;
    assert.equal(writers(1), 1, JSON.stringify(results));
    assert.equal(writers(2), 1, JSON.stringify(results));
    const [kv] = stores;
    assert.deepEqual(await contentOf(kv, "/_app/shared-SSSSSSSS.js"), shared);
    assert.deepEqual(await contentOf(kv, "/_app/own1-OOOOOOO1.js"), noise(PART_BYTES, 11));
    assert.deepEqual(await contentOf(kv, "/_app/own2-OOOOOOO2.js"), noise(PART_BYTES, 12));
    const again = await Promise.all(stores.map((kv) => keepAssets(kv, "b1", build(1), ROOMY)));
    assert.ok(again.every((r) => r.done === "already"));
  } finally {
    for (const kv of stores) kv.close();
  }
});

Deno.test("kept files expire with the retention; written again once half of it is gone", async () => {
  // A file, as `deno serve --parallel` workers share it: KV's own expiry can be read there.
  await using store = await tempStore();
  const path = store.path;
  using kv = await Deno.openKv(path);
  const retention = { ms: 3_000, maxBytes: ROOMY.maxBytes };
  const files = [file("/_app/soon-AAAAAAAA.js", noise(2 * PART_BYTES))];
  const written = Date.now();
  assert.equal((await keepAssets(kv, "b1", files, retention)).done, "now");
  assert.equal((await keepAssets(kv, "b1", files, retention)).done, "already");
  // Every entry carries KV's expiry — record, file and parts (a little later) — which deletes it
  // within a minute or so of its time.
  const db = new DatabaseSync(path, { readOnly: true });
  const rows = db.prepare("SELECT expiration_ms FROM kv").all() as { expiration_ms: number }[];
  db.close();
  assert.equal(rows.length, 1 + 1 + 3, "the build's record, the file's entry, its parts");
  for (const { expiration_ms: expiry } of rows) {
    assert.ok(expiry >= written + 3_000 && expiry <= Date.now() + 3_300, `expires at ${expiry}`);
  }

  // Half the retention later, a start writes them again with a new expiry.
  await sleep(1_600);
  const refreshed = await keepAssets(kv, "b1", files, retention);
  assert.equal(refreshed.done === "now" && refreshed.written, 1);
  assert.ok(await readAsset(kv, "/_app/soon-AAAAAAAA.js"));
  // Without another start, it is no longer served once its time has come.
  await sleep(3_100);
  assert.equal(await readAsset(kv, "/_app/soon-AAAAAAAA.js"), undefined);
  const again = await keepAssets(kv, "b1", files, retention);
  assert.equal(again.done === "now" && again.written, 1, "gone: written whole again");
});

Deno.test("the store holds at most maxBytes: the oldest builds go, what newer ones share stays", async () => {
  using kv = await Deno.openKv(":memory:");
  const size = 100_000;
  const retention = { ms: DAY, maxBytes: 350_000 };
  const shared = file("/_app/shared-SSSSSSSS.js", noise(size, 1));
  const own = (n: number) => file(`/_app/own-OOOOOOO${n}.js`, noise(size, 100 + n));
  for (const n of [1, 2]) {
    const result = await keepAssets(kv, `b${n}`, [shared, own(n)], retention);
    assert.deepEqual(result.done === "now" && result.evicted, []);
  }
  // 3 files of 100 kB held; build 3 needs one more, past 350 kB: build 1 goes, with its own file.
  const third = await keepAssets(kv, "b3", [shared, own(3)], retention);
  assert.deepEqual(third.done === "now" && third.evicted, ["b1"]);
  assert.equal(await readAsset(kv, "/_app/own-OOOOOOO1.js"), undefined);
  assert.ok(await contentOf(kv, "/_app/own-OOOOOOO2.js"));
  assert.ok(await contentOf(kv, "/_app/shared-SSSSSSSS.js"), "a newer build shares it");
  assert.ok(await contentOf(kv, "/_app/own-OOOOOOO3.js"));
  const parts = await Array.fromAsync(kv.list({ prefix: ["_assets", "part"] }));
  assert.equal(parts.length, 3 * Math.ceil((size + 100) / PART_BYTES), "no part left behind");

  // A build larger than the bound keeps what fits, its scripts before its maps, and says so.
  const alone = await keepAssets(kv, "b4", [
    file("/_app/x-XXXXXXXX.js.map", noise(size, 7)),
    file("/_app/x-XXXXXXXX.js", noise(size, 8)),
    file("/_app/y-YYYYYYYY.js", noise(size, 9)),
    file("/_app/z-ZZZZZZZZ.js", noise(size, 10)),
  ], retention);
  assert.ok(alone.done === "now");
  assert.deepEqual(alone.evicted, ["b2", "b3"]);
  assert.deepEqual(alone.left, ["/_app/x-XXXXXXXX.js.map"]);
  assert.ok(await contentOf(kv, "/_app/z-ZZZZZZZZ.js"));
});

Deno.test("the test app's build: every file its manifest lists is kept, maps when served", async () => {
  using kv = await Deno.openKv(":memory:");
  const { root, manifest } = await fixtureBuild();
  const files = manifest.assets.files!;
  assert.ok(files.some((url) => /^\/_app\/boot-\w{8}\.js$/.test(url)));
  assert.ok(files.some((url) => /^\/_app\/action-client-\w{8}\.js$/.test(url)));
  assert.ok(files.some((url) => url.endsWith(".map")));
  const options = { kv, root, manifest, retention: ROOMY };
  const withoutMaps = await keepBuildAssets({ ...options, sourceMaps: false });
  assert.equal(
    withoutMaps.done === "now" && withoutMaps.written,
    files.filter((url) => !url.endsWith(".map")).length,
  );
  await kv.delete(["_assets", "build", manifest.buildId]);
  const withMaps = await keepBuildAssets({ ...options, sourceMaps: true });
  assert.equal(
    withMaps.done === "now" && withMaps.written,
    files.filter((u) => u.endsWith(".map")).length,
  );
  const boot = files.find((url) => url.includes("/boot-"))!;
  const onDisk = await Deno.readFile(`${root}/${manifest.assetDir}/${boot.slice("/_app/".length)}`);
  assert.deepEqual(await contentOf(kv, boot), onDisk);
});

Deno.test("an app serves a kept asset its disk lacks: hashed names only, never a listing", async () => {
  using kv = await Deno.openKv(":memory:");
  const code = "export const kept = 'from an earlier build';\n".repeat(50);
  await keepAssets(kv, "earlier", [
    file("/_app/Old-ABCDEFGH.js", code),
    file("/_app/Old-ABCDEFGH.js.map", "{}"),
    file("/_app/css/routes/page-ABCDEFGH.css", "p{}"),
    file("/_app/unhashed.js", "no"),
  ], ROOMY);
  const app = createApp(memoryManifest({ routes: {} }), { root: FIXTURE_ROOT, kv });

  const res = await app.request("/_app/Old-ABCDEFGH.js", {
    headers: { "Accept-Encoding": "gzip, deflate, br" },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-encoding"), "gzip");
  assert.equal(res.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal(res.headers.get("cache-control"), "public, max-age=31536000, immutable");
  assert.equal(res.headers.get("vary"), "Accept-Encoding");
  const packed = new Uint8Array(await res.arrayBuffer());
  assert.equal(Number(res.headers.get("content-length")), packed.byteLength);
  assert.equal(new TextDecoder().decode(gunzipSync(packed)), code);

  const plain = await app.request("/_app/Old-ABCDEFGH.js", {
    headers: { "Accept-Encoding": "gzip;q=0, identity" },
  });
  assert.equal(plain.headers.get("content-encoding"), null);
  assert.equal(await plain.text(), code);

  const etag = res.headers.get("etag")!;
  const cached = await app.request("/_app/Old-ABCDEFGH.js", { headers: { "If-None-Match": etag } });
  assert.equal(cached.status, 304);
  const head = await app.request("/_app/Old-ABCDEFGH.js", { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), "");

  const css = await app.request("/_app/css/routes/page-ABCDEFGH.css");
  assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
  assert.equal(await css.text(), "p{}");
  assert.equal((await app.request("/_app/Old-ABCDEFGH.js.map")).status, 200);

  const hidden = createApp(memoryManifest({ routes: {} }), {
    root: FIXTURE_ROOT,
    kv,
    serveSourceMaps: false,
  });
  const map = await hidden.request("/_app/Old-ABCDEFGH.js.map");
  assert.equal(map.status, 404, "maps not served are not served from KV either");
  await map.body?.cancel();

  // What is never looked up: names the build does not make, other folders, the folder itself.
  const { kv: watched, calls } = counted(kv);
  const looking = createApp(memoryManifest({ routes: {} }), { root: FIXTURE_ROOT, kv: watched });
  for (
    const path of [
      "/_app/unhashed.js",
      "/_app/",
      "/_app/Old-abcdefgh.js",
      "/_app/..%2F..%2Fdeno.json",
      "/_app/../_app/Old-ABCDEFGH.txt",
      `/_app/${"a/".repeat(20)}x-ABCDEFGH.js`,
      "/Old-ABCDEFGH.js",
    ]
  ) {
    const miss = await looking.request(path);
    assert.equal(miss.status, 404, path);
    await miss.body?.cancel();
  }
  assert.deepEqual(calls.filter((call) => call === "get"), [], "no KV read for any of them");
  const unknown = await looking.request("/_app/Gone-ZZZZZZZZ.js");
  assert.equal(unknown.status, 404);
  await unknown.body?.cancel();
  assert.deepEqual(calls.filter((call) => call === "get"), ["get"], "one read for a hashed name");
});

Deno.test("a stop waits for a kept asset's body, which reads its parts from KV as it is sent", async () => {
  const kv = await Deno.openKv(":memory:");
  // Twenty parts: the first ten read before the answer, the rest as the client reads.
  const bytes = noise(20 * PART_BYTES);
  await keepAssets(kv, "earlier", [file("/_app/Big-ABCDEFGH.js", bytes)], ROOMY);
  const app = createApp(memoryManifest({ routes: {} }), { root: FIXTURE_ROOT, kv });
  await using server = serveApp(app);
  const res = await server.fetch("/_app/Big-ABCDEFGH.js"); // gzip, which fetch undoes
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-encoding"), "gzip");
  // As `deno serve`'s stop does (lib/cli/stop.ts): the store closes once the app lets go of it.
  const stopped = app.stop().then(() => kv.close());
  await sleep(100);
  // The body was cut ("error reading a body from connection") when the store closed under it.
  assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
  await stopped;
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

Deno.test("assetRetention given in code is checked as its variables are: a RangeError naming it", async () => {
  // Before: a fraction of a day or an unbounded budget was taken, and kept or pruned by at start.
  const made = (assetRetention: { days: number; maxBytes: number }) => () =>
    createApp(memoryManifest({ routes: {} }), { root: FIXTURE_ROOT, assetRetention });
  const MIB = 1024 * 1024;
  for (const days of [0.5, -1, 366, NaN]) {
    assert.throws(
      made({ days, maxBytes: 64 * MIB }),
      /assetRetention\.days must be a whole number from 0 to 365/,
    );
  }
  for (const maxBytes of [Infinity, MIB - 1, MIB + 0.5]) {
    assert.throws(
      made({ days: 7, maxBytes }),
      /assetRetention\.maxBytes must be a whole number from 1048576/,
    );
  }
  await made({ days: 0, maxBytes: MIB })().close();
});
