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
 * (the others go on serving the stale one meanwhile). Its holder lets go of it in the commit that
 * writes the page, which checks that it still holds it: a lease taken over is its new holder's.
 * A holder that dies (SIGKILL, an isolate recycled, an OOM) cannot let go: so a lease is short, and
 * renewed every `LEASE_RENEW_MS` while its holder still renders or writes - each renewal a new
 * versionstamp. A process that sees one versionstamp for `LEASE_LAPSE_MS` of its own clock (no
 * clocks compared across machines) - a waiter, or a stale hit - takes the holder for dead and the
 * lease over (waiting.ts). A render whose page is written within the first `LEASE_RENEW_MS` renews
 * nothing: no KV write more.
 *
 * Round trips: a lease taken with the slot as its taker last read it (`seen`) checks in the same
 * commit that nothing was stored there since - the taker needs no second read to know its page is
 * still missing - and the page's write starts from that slot: a miss reads KV once and commits
 * twice (the lease, then the page with the lease's release). Two commits is the least that keeps
 * a page rendered once across processes: the lease must be in KV before the render begins, for
 * the others to see it, and the page can only be written after it ends.
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
/**
 * With its record, a page's pieces and the pieces it replaces fit one commit (800 KiB) and one
 * `getMany` (10 keys).
 */
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

/**
 * A page's slot as a read found it: a commit that checks it knows nothing was stored there since,
 * and which pieces it replaces.
 */
export interface Seen {
  readonly versionstamp: string | null;
  readonly record: Record | null;
}

/** A lease's outcome: this process's, another's, or unknown (the file stayed locked). */
export type Lease = "taken" | "held" | "locked";

export interface SharedLayer {
  /**
   * The page if stored (and `wanted`, which its record says before its body is read), and its
   * slot as seen.
   */
  read(
    key: string,
    wanted?: (page: StoredInfo) => boolean,
  ): Promise<{ page?: StoredPage; seen: Seen }>;
  /**
   * `read`, with the versionstamp of the page's lease if a process holds it (is rendering it;
   * renewed, it changes).
   */
  peek(
    key: string,
    wanted: (page: StoredInfo) => boolean,
  ): Promise<{ page?: StoredPage; lease?: string; seen: Seen }>;
  /**
   * Stores `page`, letting go of its lease in the same commit with `release` if this process
   * still holds it (the commit checks it: a lease taken over stays its new holder's); false when
   * writes to its slot kept coming first (the lease is then still held). A locked file is tried
   * again, boundedly; then it throws `KvBusyError`.
   */
  write(page: StoredPage, release?: boolean): Promise<boolean>;
  /**
   * Whether this process may render `key`: taken, it is renewed for `ms` at most, until `release`,
   * a `write` that lets go of it, or `lapse`. `over`: the versionstamp of a lease seen lapsed, to
   * take over (none holds it otherwise). `seen`: the page's slot as the caller read it, checked in
   * the same commit, so that nothing was stored since (the lease is "held" when a page of `key`
   * was: the caller reads it) and its `write` needs no read of its own.
   */
  lease(key: string, ms: number, from?: { over?: string; seen?: Seen }): Promise<Lease>;
  /** Lets go of `key`'s lease if this process still holds it. */
  release(key: string): Promise<void>;
  /** Renews `key`'s lease no more: it lapses by itself (its page is not on its way to KV). */
  lapse(key: string): void;
  /** Renews no lease any more: this process is going away, its renders' leases lapse. */
  close(): void;
}

export function sharedLayer(kv: Deno.Kv, buildId: string, slots: number): SharedLayer {
  const root = ["page_cache", buildId];
  const leases = heldLeases(kv);
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
  const seenOf = (entry: Deno.KvEntryMaybe<Record>): Seen => ({
    versionstamp: entry.versionstamp,
    record: entry.value,
  });

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

  /** The page of `record` if `wanted`: a page the caller would not use is not read whole. */
  const wantedPage = (
    slot: number,
    key: string,
    record: Record | null,
    wanted: (page: StoredInfo) => boolean = all,
  ) => pageOf(slot, key, record && wanted(record) ? record : null);

  return {
    async read(key, wanted) {
      const slot = slotOf(key);
      const record = await kv.get<Record>(recordKey(slot));
      return { page: await wantedPage(slot, key, record.value, wanted), seen: seenOf(record) };
    },

    async peek(key, wanted) {
      const slot = slotOf(key);
      const [record, lease] = await kv.getMany<[Record, true]>([
        recordKey(slot),
        await leaseKey(key),
      ]);
      return {
        page: await wantedPage(slot, key, record.value, wanted),
        lease: lease.versionstamp ?? undefined,
        seen: seenOf(record),
      };
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
      const lease = release ? leases.get(page.key) : undefined;
      // The slot as the lease's commit checked it: the first attempt reads nothing.
      let seen = lease?.seen;
      let ours = lease !== undefined;
      let conflicts = 0;
      const written = await retrying("a page cache write", async (commit) => {
        await lease?.renewing; // its versionstamp as it is now
        if (!seen) {
          const [record, held] = lease
            ? await kv.getMany<[Record, true]>([recordKey(slot), lease.at])
            : [await kv.get<Record>(recordKey(slot))];
          seen = seenOf(record);
          // Taken over (this process was taken for dead) or gone: its new holder's, or no one's.
          ours = lease !== undefined && held?.versionstamp === lease.stamp;
        }
        const generation = crypto.randomUUID();
        const record: Record = { ...rest, generation, pieces, size: body.byteLength };
        let op = kv.atomic().check({ key: recordKey(slot), versionstamp: seen.versionstamp })
          .set(recordKey(slot), record, { expireIn });
        for (let i = 0; i < pieces; i++) {
          op = op.set(pieceKey(slot, generation, i), body.subarray(i * PIECE, (i + 1) * PIECE), {
            expireIn,
          });
        }
        const old = seen.record;
        for (let i = 0; old && i < old.pieces; i++) {
          op = op.delete(pieceKey(slot, old.generation, i));
        }
        if (lease && ours) {
          op = op.check({ key: lease.at, versionstamp: lease.stamp }).delete(lease.at);
        }
        const result = await commit(op);
        if (result.ok) return true;
        if ("locked" in result) return undefined;
        // Another write to the slot, or a renewal of the lease, came first: read it again.
        seen = undefined;
        return ++conflicts < WRITE_CONFLICTS ? undefined : false;
      }, WRITE_ATTEMPTS);
      if (written && lease) leases.take(page.key);
      return written;
    },

    async lease(key, ms, { over, seen } = {}) {
      const at = await leaseKey(key);
      const record = recordKey(slotOf(key));
      let slot = seen;
      try {
        const stamp = await retrying(
          "a page cache lease",
          async (commit) => {
            let op = kv.atomic().check({ key: at, versionstamp: over ?? null });
            if (slot) op = op.check({ key: record, versionstamp: slot.versionstamp });
            const result = await commit(op.set(at, true, LEASE_SET));
            if (result.ok) return result.versionstamp;
            if ("locked" in result || !slot) return "locked" in result ? undefined : false;
            // Which check failed: the lease is another's, or the page stored meanwhile (read by
            // the caller); else another page took the slot, which does not stop this one.
            const [now, lease] = await kv.getMany<[Record, true]>([record, at]);
            if (lease.versionstamp !== (over ?? null) || now.value?.key === key) return false;
            slot = seenOf(now);
            return undefined;
          },
          LEASE_ATTEMPTS,
          0,
        );
        if (!stamp) return "held";
        leases.start(key, { at, stamp, seen: slot }, ms);
        return "taken";
      } catch (error) {
        if (error instanceof KvBusyError) return "locked";
        throw error;
      }
    },

    async release(key) {
      const lease = leases.take(key);
      if (!lease) return;
      await lease.renewing;
      await retrying("a page cache lease's release", async (commit) => {
        const op = kv.atomic().check({ key: lease.at, versionstamp: lease.stamp }).delete(lease.at);
        const result = await commit(op);
        // A failed check: taken over meanwhile, so not this process's to let go.
        return result.ok || !("locked" in result) ? true : undefined;
      }, WRITE_ATTEMPTS);
    },

    lapse(key) {
      leases.take(key);
    },

    close() {
      leases.close();
    },
  };
}

const all = (_page: StoredInfo) => true;

/**
 * Write attempts that lose to another write to the slot (or to the lease's renewal) before the
 * page is given up: each reads the slot again.
 */
const WRITE_CONFLICTS = 3;

/** A lease as written: the key goes a while after its last renewal (waiters do not rely on it). */
const LEASE_SET = { expireIn: 2 * LEASE_LAPSE_MS };

/** A lease this process holds: its key, its versionstamp now, and its page's slot as it saw it. */
interface HeldLease {
  at: Deno.KvKey;
  stamp: string;
  seen?: Seen;
  timer?: ReturnType<typeof setTimeout>;
  /** The renewal under way, if one is: `stamp` is current once it settled. */
  renewing?: Promise<void>;
}

/**
 * The leases this process holds, each renewed `LEASE_RENEW_MS` after its last write, for `ms` at
 * most after it was taken: a holder stuck for good lets its lease lapse like a dead one. One is
 * forgotten when its page is written, when it is let go or left to lapse, and when another process
 * took it over (a renewal's check failed).
 */
function heldLeases(kv: Deno.Kv) {
  const held = new Map<string, HeldLease>();
  const renew = (key: string, lease: HeldLease, end: number) => {
    const timer = setTimeout(() => {
      if (lease.timer !== timer || Date.now() >= end) return;
      lease.renewing = (async () => {
        // Only this holder's lease: one taken over meanwhile (this process was taken for dead)
        // stays.
        const op = kv.atomic().check({ key: lease.at, versionstamp: lease.stamp })
          .set(lease.at, true, LEASE_SET);
        // A renewal missed (the file busy, KV closed) is no loss yet: the next may land.
        const result = await op.commit().catch(() => undefined);
        if (result?.ok) lease.stamp = result.versionstamp;
        if (lease.timer !== timer) return;
        if (result && !result.ok) return void (held.get(key) === lease && held.delete(key));
        renew(key, lease, end);
      })();
    }, LEASE_RENEW_MS);
    Deno.unrefTimer(timer);
    lease.timer = timer;
  };
  const stop = (lease: HeldLease) => {
    clearTimeout(lease.timer);
    lease.timer = undefined;
  };
  return {
    start(key: string, lease: HeldLease, ms: number) {
      const before = held.get(key);
      if (before) stop(before);
      held.set(key, lease);
      renew(key, lease, Date.now() + ms);
    },
    get: (key: string) => held.get(key),
    /** Forgets `key`'s lease, renewed no more; what it was, if this process held it. */
    take(key: string): HeldLease | undefined {
      const lease = held.get(key);
      if (lease) stop(lease);
      held.delete(key);
      return lease;
    },
    close() {
      held.forEach(stop);
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
