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
 * A write that finds SQLite's file locked by another handle (a worker writing its build's assets
 * at start, a backup tool) tries again, a bounded number of times: one `{ ok: false }` used to
 * drop the page silently, and every other worker rendered it again.
 *
 * A lease (one key per page, taken with an atomic check) makes one process of all render a page:
 * the first render of a page none holds (the others wait for it, `peek`), and a stale page again
 * (the others go on serving the stale one meanwhile). Its holder lets go once the page is written.
 * A holder that dies (SIGKILL, an isolate recycled, an OOM) cannot let go: so a lease is short, and
 * renewed every `LEASE_RENEW_MS` while its holder still renders or writes - each renewal a new
 * versionstamp. A waiter that sees one versionstamp for `LEASE_LAPSE_MS` of its own clock (no clocks
 * compared across machines) takes the holder for dead and the lease over (waiting.ts). A render
 * whose page is written within the first `LEASE_RENEW_MS` renews nothing: no KV write more.
 */
import { KvBusyError, retrying } from "../kv/commit.ts";
import type { StoredPage } from "./entry.ts";

/** A held lease is renewed this long after it was last written, while its holder still works. */
export const LEASE_RENEW_MS = 500;
/**
 * A lease unrenewed this long is its holder's death to a waiter: three renewals' time, so a
 * renewal slowed by a busy file (a second of retries, commit.ts) is not taken for one.
 */
export const LEASE_LAPSE_MS = 3 * LEASE_RENEW_MS;
/** Under KV's limit of 64 KiB a value. */
const PIECE = 60 * 1024;
/** With its record, a page's pieces and the pieces it replaces fit one commit (800 KiB) and one `getMany` (10 keys). */
export const MAX_BODY = 10 * PIECE;
/** Kept past a page's last use, so a slow reader still finds its pieces. */
const GRACE_MS = 60_000;
/**
 * Attempts at a write while another handle holds the file: about a second of backing off
 * (commit.ts), longer than the writes that take the lock (a commit each) hold it.
 */
const WRITE_ATTEMPTS = 30;
/**
 * Attempts at a lease while the file is locked: half a second of backing off or so, then none is
 * taken (the page is rendered without one, unless another process holds it) - the attempts only,
 * not the longer wait for the lock other writes make (commit.ts): a user waits on this one.
 */
const LEASE_ATTEMPTS = 20;

/** What a stored page's record says of it, its body aside. */
export type StoredInfo = Omit<StoredPage, "body">;
type Record = StoredInfo & { generation: string; pieces: number; size: number };

/** A lease's outcome: this process's, another's, or unknown (the file stayed locked). */
export type Lease = "taken" | "held" | "locked";

export interface SharedLayer {
  read(key: string): Promise<StoredPage | undefined>;
  /**
   * The page if stored and `wanted` (its record says so before its body is read), and the
   * versionstamp of its lease if a process holds it (is rendering it; renewed, it changes).
   */
  peek(
    key: string,
    wanted: (page: StoredInfo) => boolean,
  ): Promise<{ page?: StoredPage; lease?: string }>;
  /**
   * Stores `page`, letting go of its lease in the same commit with `release`; false when another
   * write to its slot came first (the lease is then still held). A locked file is tried again,
   * boundedly; then it throws `KvBusyError`.
   */
  write(page: StoredPage, release?: boolean): Promise<boolean>;
  /**
   * Whether this process may render `key`: taken, it is renewed for `ms` at most, until `release`,
   * a `write` that lets go of it, or `lapse`. `over`: the versionstamp of a lease seen lapsed, to
   * take over (none holds it otherwise).
   */
  lease(key: string, ms: number, over?: string): Promise<Lease>;
  release(key: string): Promise<void>;
  /** Renews `key`'s lease no more: it lapses by itself (its page is not on its way to KV). */
  lapse(key: string): void;
  /** Renews no lease any more: this process is going away, its renders' leases lapse. */
  close(): void;
}

export function sharedLayer(kv: Deno.Kv, buildId: string, slots: number): SharedLayer {
  const root = ["page_cache", buildId];
  const renewals = leaseRenewals(kv);
  const slotOf = (key: string) => fnv1a(key) % slots;
  const recordKey = (slot: number) => [...root, "page", slot];
  const pieceKey = (slot: number, generation: string, i: number) => [
    ...root,
    "piece",
    slot,
    generation,
    i,
  ];
  // A digest of the whole key, not its slot: two pages sharing a place never wait for each other.
  const leaseKey = async (key: string) => [...root, "lease", await digest(key)];

  async function pageOf(slot: number, key: string, record: Record | null) {
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
  }

  return {
    async read(key) {
      const slot = slotOf(key);
      return await pageOf(slot, key, (await kv.get<Record>(recordKey(slot))).value);
    },

    async peek(key, wanted) {
      const slot = slotOf(key);
      const [record, lease] = await kv.getMany<[Record, true]>([
        recordKey(slot),
        await leaseKey(key),
      ]);
      const found = record.value && wanted(record.value) ? record.value : null;
      return { page: await pageOf(slot, key, found), lease: lease.versionstamp ?? undefined };
    },

    async write(page, release = false) {
      if (page.body.byteLength > MAX_BODY) return false;
      const slot = slotOf(page.key);
      const pieces = Math.ceil(page.body.byteLength / PIECE);
      const expireIn = (page.maxAge + page.staleWhileRevalidate) * 1000 + GRACE_MS;
      // Named one by one: a page held in memory (entry.ts `HeldPage`) carries its body compressed
      // in each coding, which spread into the record went to KV whole, backing buffers and all
      // (a 2 KB page took 7 KB; past 64 KiB of them every write failed: "Value too large").
      const { body, key, nonce, etag, headers, storedAt, maxAge, staleWhileRevalidate, tags } =
        page;
      const rest = { key, nonce, etag, headers, storedAt, maxAge, staleWhileRevalidate, tags };
      const lease = release ? await leaseKey(page.key) : undefined;
      return await retrying("a page cache write", async (commit) => {
        const before = await kv.get<Record>(recordKey(slot));
        const generation = crypto.randomUUID();
        const record: Record = { ...rest, generation, pieces, size: body.byteLength };
        let op = kv.atomic().check(before).set(recordKey(slot), record, { expireIn });
        for (let i = 0; i < pieces; i++) {
          op = op.set(pieceKey(slot, generation, i), body.subarray(i * PIECE, (i + 1) * PIECE), {
            expireIn,
          });
        }
        const old = before.value;
        for (let i = 0; old && i < old.pieces; i++) {
          op = op.delete(pieceKey(slot, old.generation, i));
        }
        if (lease) op = op.delete(lease);
        const result = await commit(op);
        return result.ok ? true : "locked" in result ? undefined : false;
      }, WRITE_ATTEMPTS).then((written) => {
        if (written && release) renewals.stop(page.key);
        return written;
      });
    },

    async lease(key, ms, over) {
      const at = await leaseKey(key);
      try {
        const stamp = await retrying(
          "a page cache lease",
          async (commit) => {
            const result = await commit(
              kv.atomic().check({ key: at, versionstamp: over ?? null }).set(at, true, LEASE_SET),
            );
            return result.ok ? result.versionstamp : "locked" in result ? undefined : false;
          },
          LEASE_ATTEMPTS,
          0,
        );
        if (!stamp) return "held";
        renewals.start(key, at, stamp, ms);
        return "taken";
      } catch (error) {
        if (error instanceof KvBusyError) return "locked";
        throw error;
      }
    },

    async release(key) {
      renewals.stop(key);
      await retrying("a page cache lease's release", async (commit) => {
        const result = await commit(kv.atomic().delete(await leaseKey(key)));
        return result.ok ? true : undefined;
      }, WRITE_ATTEMPTS);
    },

    lapse(key) {
      renewals.stop(key);
    },

    close() {
      renewals.close();
    },
  };
}

/** A lease as written: the key goes a while after its last renewal (waiters do not rely on it). */
const LEASE_SET = { expireIn: 2 * LEASE_LAPSE_MS };

/**
 * The leases this process holds, each renewed `LEASE_RENEW_MS` after its last write, for `ms` at
 * most after it was taken: a holder stuck for good lets its lease lapse like a dead one.
 */
function leaseRenewals(kv: Deno.Kv) {
  const held = new Map<string, ReturnType<typeof setTimeout>>();
  const renew = (key: string, at: Deno.KvKey, stamp: string, end: number) => {
    const timer = setTimeout(async () => {
      if (held.get(key) !== timer) return;
      if (Date.now() >= end) return void held.delete(key);
      // Only this holder's lease: one taken over meanwhile (this process was taken for dead) stays.
      const op = kv.atomic().check({ key: at, versionstamp: stamp }).set(at, true, LEASE_SET);
      // A renewal missed (the file busy, KV closed) is no loss yet: the next may land.
      const result = await op.commit().catch(() => undefined);
      if (held.get(key) !== timer) return;
      if (result && !result.ok) return void held.delete(key);
      renew(key, at, result?.versionstamp ?? stamp, end);
    }, LEASE_RENEW_MS);
    Deno.unrefTimer(timer);
    held.set(key, timer);
  };
  return {
    start(key: string, at: Deno.KvKey, stamp: string, ms: number) {
      renew(key, at, stamp, Date.now() + ms);
    },
    stop(key: string) {
      clearTimeout(held.get(key));
      held.delete(key);
    },
    close() {
      held.forEach((timer) => clearTimeout(timer));
      held.clear();
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

/** SHA-256 of `text`, as a KV key part: a page's key may be longer than a KV key may be. */
async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
}
