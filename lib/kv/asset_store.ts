/**
 * @module
 * The browser assets of earlier builds, kept in Deno KV, so that a tab opened before a deploy still
 * gets every chunk it asks for later - an island that loads late, the action client, the Sentry
 * SDK - where the new build's files no longer hold them: a Deno Deploy deployment holds only its
 * own, and a server's `_build/` keeps three builds. Every process of every build shares the store.
 *
 * - Content-addressed: an asset is keyed by its URL, whose hash names its content
 *   (`/_app/chunk-AB12CD34.js`). It is stored gzip-compressed, in parts under KV's 64 KiB value
 *   limit, themselves keyed by the SHA-256 of what they hold: a reader never mixes two writers'
 *   parts, and a file shared by many builds is stored once.
 * - Written once per build (`keepAssets`): one process takes a lease and writes; any other, at the
 *   same time, leaves it the work (a read and a failed commit); later starts find it done (one
 *   read). A file already stored is not written again, unless half its life has gone.
 * - Bounded: every entry expires after the retention, counted from the last time a server of a
 *   build that uses it wrote it (started, or refreshed it while running) - it is no longer served
 *   then, and KV deletes it within a minute or so (`expireIn`); and the store holds at most
 *   `maxBytes`: past it, the oldest builds go first, with their files that no newer build uses.
 *   Within a build, scripts and stylesheets before source maps.
 */
import { retrying } from "./commit.ts";

/** How long and how much the store keeps. */
export interface AssetRetention {
  /** How long an asset stays after a server of its build last wrote it, in ms. */
  ms: number;
  /** Most bytes (compressed) the store holds across builds. */
  maxBytes: number;
}

/** One file of a build: its URL, and its bytes gzip-compressed (none: the file is not there). */
export interface AssetFile {
  url: string;
  gzipped(): Promise<Uint8Array | undefined>;
}

/** What the store knows of a file. */
export interface StoredFile {
  /** SHA-256 of the stored (compressed) bytes, hex: names its parts, and its ETag. */
  hash: string;
  parts: number;
  /** Compressed bytes. */
  bytes: number;
  /** Milliseconds since the epoch after which it is gone. */
  expires: number;
}

/** A build's record: its files, and whether they are written (`kept`) or being written. */
interface BuildRecord {
  state: "writing" | "kept";
  /** When the record was written. */
  at: number;
  files: string[];
}

/** What `keepAssets` did. */
export type KeepResult =
  | { done: "already" }
  | { done: "elsewhere" }
  | { done: "now"; written: number; bytes: number; evicted: string[]; left: string[] };

/** Under KV's 65 536 bytes for a value, with room for V8's serialization header. */
export const PART_BYTES = 63 * 1024;
/** How long one process may take to write a build before another may take over. */
const LEASE_MS = 120_000;
/** Parts of a file outlive its record a little: a reader that found it finds them. */
const PART_GRACE = 1.1;

const BUILD = "build";
const FILE = "file";
const PART = "part";
const PREFIX = "_assets";

const buildKey = (id: string) => [PREFIX, BUILD, id];
const fileKey = (url: string) => [PREFIX, FILE, url];
const partKey = (hash: string, i: number) => [PREFIX, PART, hash, i];

/** How long after writing a file it is worth writing again: half its life, at most 12 hours. */
function refreshAfter(retention: AssetRetention): number {
  return Math.min(retention.ms / 2, 12 * 60 * 60 * 1000);
}

/**
 * Keeps the `files` of build `buildId` for `retention`: the work of one process per build, done
 * once (and again once half the files' life has gone), safe with any number of processes of any
 * builds doing it at once.
 */
export async function keepAssets(
  kv: Deno.Kv,
  buildId: string,
  files: AssetFile[],
  retention: AssetRetention,
): Promise<KeepResult> {
  const now = Date.now();
  const recorded = await kv.get<BuildRecord>(buildKey(buildId));
  const record = recorded.value;
  if (record?.state === "kept" && now - record.at < refreshAfter(retention)) {
    return { done: "already" };
  }
  if (record?.state === "writing" && now - record.at < LEASE_MS) return { done: "elsewhere" };
  const urls = files.map((file) => file.url);
  // The lease lists the build's files from the start: another process evicting meanwhile keeps
  // them.
  const lease = await retrying("an asset lease", async (commit) => {
    const result = await commit(
      kv.atomic().check(recorded).set(
        buildKey(buildId),
        { state: "writing", at: now, files: urls } satisfies BuildRecord,
        { expireIn: LEASE_MS },
      ),
    );
    return result.ok ? true : "locked" in result ? undefined : false;
  });
  if (!lease) return { done: "elsewhere" };

  const stored = await storedFiles(kv);
  const due = files.filter((file) => {
    const known = stored.get(file.url);
    return !known || known.expires - now < retention.ms - refreshAfter(retention);
  });
  // Scripts and stylesheets before source maps: what a tab cannot do without first.
  due.sort((a, b) => Number(a.url.endsWith(".map")) - Number(b.url.endsWith(".map")));
  const read = await Promise.all(
    due.map(async (file) => ({ url: file.url, body: await file.gzipped() })),
  );
  const contents = read.filter((file): file is { url: string; body: Uint8Array } => !!file.body);
  const needed = contents.reduce((sum, file) => sum + file.body.byteLength, 0);
  const evicted = await evict(kv, stored, buildId, new Set(urls), needed, retention.maxBytes);

  let total = sumBytes(stored);
  let written = 0;
  let bytes = 0;
  const left: string[] = [];
  for (const { url, body } of contents) {
    const before = stored.get(url)?.bytes ?? 0;
    if (total - before + body.byteLength > retention.maxBytes) {
      left.push(url);
      continue;
    }
    const entry = await writeFile(kv, url, body, retention.ms);
    stored.set(url, entry);
    total += entry.bytes - before;
    written++;
    bytes += entry.bytes;
  }
  await kv.set(
    buildKey(buildId),
    { state: "kept", at: Date.now(), files: urls } satisfies BuildRecord,
    { expireIn: retention.ms },
  );
  return { done: "now", written, bytes, evicted, left };
}

/**
 * Every file the store holds, by URL (an expired one is gone, whether KV deleted it yet or not).
 */
async function storedFiles(kv: Deno.Kv): Promise<Map<string, StoredFile>> {
  const files = new Map<string, StoredFile>();
  const now = Date.now();
  for await (const entry of kv.list<StoredFile>({ prefix: [PREFIX, FILE] })) {
    if (entry.value.expires > now) files.set(entry.key[2] as string, entry.value);
  }
  return files;
}

function sumBytes(files: Map<string, StoredFile>): number {
  let sum = 0;
  for (const file of files.values()) sum += file.bytes;
  return sum;
}

/**
 * Makes room for `needed` more bytes within `maxBytes`: the oldest builds' records go, other than
 * `current`'s, one after the other, with the files no remaining build (nor `keep`) uses. Returns
 * the builds evicted. `stored` is updated.
 */
async function evict(
  kv: Deno.Kv,
  stored: Map<string, StoredFile>,
  current: string,
  keep: Set<string>,
  needed: number,
  maxBytes: number,
): Promise<string[]> {
  if (sumBytes(stored) + needed <= maxBytes) return [];
  const builds: { id: string; record: BuildRecord }[] = [];
  for await (const entry of kv.list<BuildRecord>({ prefix: [PREFIX, BUILD] })) {
    const id = entry.key[2] as string;
    if (id !== current) builds.push({ id, record: entry.value });
  }
  builds.sort((a, b) => a.record.at - b.record.at);
  const evicted: string[] = [];
  while (builds.length > 0 && sumBytes(stored) + needed > maxBytes) {
    const { id } = builds.shift()!;
    await kv.delete(buildKey(id));
    evicted.push(id);
    const used = new Set(keep);
    for (const { record } of builds) for (const url of record.files) used.add(url);
    const gone = [...stored].filter(([url]) => !used.has(url));
    for (const [url] of gone) stored.delete(url);
    const hashes = new Set([...stored.values()].map((file) => file.hash));
    for (const [url, file] of gone) {
      await kv.delete(fileKey(url));
      // Two URLs may hold the same bytes: their parts go with the last of them.
      if (hashes.has(file.hash)) continue;
      for (let i = 0; i < file.parts; i++) await kv.delete(partKey(file.hash, i));
    }
  }
  return evicted;
}

/** Writes `body` as the file `url`: its parts first, then the entry that names them. */
async function writeFile(
  kv: Deno.Kv,
  url: string,
  body: Uint8Array,
  ms: number,
): Promise<StoredFile> {
  const hash = await sha256(body);
  const parts = Math.max(1, Math.ceil(body.byteLength / PART_BYTES));
  const expireIn = Math.ceil(ms * PART_GRACE);
  // A few at a time: on Deno Deploy each write is a round trip.
  for (let i = 0; i < parts; i += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, parts - i) }, (_, j) => {
        const at = (i + j) * PART_BYTES;
        // A copy, not a view: KV would serialize a view's whole buffer.
        return kv.set(partKey(hash, i + j), body.slice(at, at + PART_BYTES), { expireIn });
      }),
    );
  }
  const entry: StoredFile = { hash, parts, bytes: body.byteLength, expires: Date.now() + ms };
  await kv.set(fileKey(url), entry, { expireIn: ms });
  return entry;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
  );
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A stored file as it is served: its entry, and its compressed bytes as a stream. */
export interface KeptAsset extends StoredFile {
  body: ReadableStream<Uint8Array<ArrayBuffer>>;
}

/** `getMany` takes ten keys at most. */
const BATCH = 10;

/**
 * The file `url` if the store holds it, whole: its first parts are read before this resolves (a
 * file whose parts are gone is not there), the others as the stream is read.
 */
export async function readAsset(kv: Deno.Kv, url: string): Promise<KeptAsset | undefined> {
  const { value: file } = await kv.get<StoredFile>(fileKey(url));
  // KV deletes what expired within a minute or so, and reads it until then.
  if (!file || file.expires <= Date.now()) return undefined;
  const batch = async (from: number) => {
    const keys = [];
    for (let i = from; i < Math.min(from + BATCH, file.parts); i++) {
      keys.push(partKey(file.hash, i));
    }
    const entries = await kv.getMany<Uint8Array<ArrayBuffer>[]>(keys);
    return entries.every((entry) => entry.value instanceof Uint8Array)
      ? entries.map((entry) => entry.value!)
      : undefined;
  };
  const first = await batch(0);
  if (!first) return undefined;
  let next = BATCH;
  const body = new ReadableStream<Uint8Array<ArrayBuffer>>({
    start(controller) {
      for (const part of first) controller.enqueue(part);
      if (next >= file.parts) controller.close();
    },
    async pull(controller) {
      const parts = await batch(next);
      if (!parts) return controller.error(new Error(`${url}: a part is gone from the store`));
      for (const part of parts) controller.enqueue(part);
      next += BATCH;
      if (next >= file.parts) controller.close();
    },
  }, { highWaterMark: 0 });
  return { ...file, body };
}
