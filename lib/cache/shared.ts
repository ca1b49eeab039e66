/**
 * @module
 * The shared layer of the page cache, in Deno KV: what every worker and instance reads. Its size is
 * fixed whatever clients ask for: a page goes to one of `slots` places, chosen by a hash of its key
 * (a page stored where another was replaces it; the full key is kept and compared, so a slot never
 * answers for another page). A page's body is cut into pieces under KV's 64 KiB a value, written
 * with its record in one atomic commit under a generation of its own, and the pieces of the page it
 * replaces are deleted in the same commit; a reader that finds a piece missing (replaced meanwhile)
 * takes it as not stored. Everything expires with the page (`expireIn`), so a build's pages go
 * once a new build serves (the build id is part of every key).
 *
 * A lease (one key per slot, taken with an atomic check) makes one process of all render a stale
 * page again; the others go on serving the stale one meanwhile.
 */
import { commit } from "../kv/commit.ts";
import type { StoredPage } from "./entry.ts";

/** Under KV's limit of 64 KiB a value. */
const PIECE = 60 * 1024;
/** With its record, a page's pieces and the pieces it replaces fit one commit (800 KiB) and one `getMany` (10 keys). */
export const MAX_BODY = 10 * PIECE;
/** Kept past a page's last use, so a slow reader still finds its pieces. */
const GRACE_MS = 60_000;

type Record = Omit<StoredPage, "body"> & { generation: string; pieces: number; size: number };

export interface SharedLayer {
  read(key: string): Promise<StoredPage | undefined>;
  /** Stores `page`; false when another write to its slot came first. */
  write(page: StoredPage): Promise<boolean>;
  /** Whether this process may render `key` again (for `ms` at most); release with `release`. */
  lease(key: string, ms: number): Promise<boolean>;
  release(key: string): Promise<void>;
}

export function sharedLayer(kv: Deno.Kv, buildId: string, slots: number): SharedLayer {
  const root = ["page_cache", buildId];
  const slotOf = (key: string) => fnv1a(key) % slots;
  const recordKey = (slot: number) => [...root, "page", slot];
  const pieceKey = (slot: number, generation: string, i: number) => [
    ...root,
    "piece",
    slot,
    generation,
    i,
  ];
  const leaseKey = (key: string) => [...root, "lease", slotOf(key)];

  return {
    async read(key) {
      const slot = slotOf(key);
      const { value: record } = await kv.get<Record>(recordKey(slot));
      if (!record || record.key !== key) return undefined;
      const keys = Array.from(
        { length: record.pieces },
        (_, i) => pieceKey(slot, record.generation, i),
      );
      const pieces = await kv.getMany<Uint8Array[]>(keys);
      if (pieces.some((piece) => !(piece.value instanceof Uint8Array))) return undefined;
      const body = new Uint8Array(record.size);
      let at = 0;
      for (const piece of pieces) {
        body.set(piece.value as Uint8Array, at);
        at += (piece.value as Uint8Array).byteLength;
      }
      const { generation: _g, pieces: _p, size: _s, ...page } = record;
      return { ...page, body };
    },

    async write(page) {
      if (page.body.byteLength > MAX_BODY) return false;
      const slot = slotOf(page.key);
      const before = await kv.get<Record>(recordKey(slot));
      const generation = crypto.randomUUID();
      const pieces = Math.ceil(page.body.byteLength / PIECE);
      const expireIn = (page.maxAge + page.staleWhileRevalidate) * 1000 + GRACE_MS;
      const { body, ...rest } = page;
      const record: Record = { ...rest, generation, pieces, size: body.byteLength };
      let op = kv.atomic().check(before).set(recordKey(slot), record, { expireIn });
      for (let i = 0; i < pieces; i++) {
        op = op.set(pieceKey(slot, generation, i), body.subarray(i * PIECE, (i + 1) * PIECE), {
          expireIn,
        });
      }
      const old = before.value;
      for (let i = 0; old && i < old.pieces; i++) op = op.delete(pieceKey(slot, old.generation, i));
      return (await commit(op)).ok;
    },

    async lease(key, ms) {
      const op = kv.atomic().check({ key: leaseKey(key), versionstamp: null })
        .set(leaseKey(key), true, { expireIn: ms });
      return (await commit(op)).ok;
    },

    async release(key) {
      await kv.delete(leaseKey(key));
    },
  };
}

/** FNV-1a, 32 bits: spreads keys over slots; not a security boundary (keys are compared whole). */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
