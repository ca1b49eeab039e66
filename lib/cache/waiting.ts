/**
 * @module
 * Waiting, boundedly, for another request's render of a page no one holds yet, so that a burst of
 * first requests renders it once: a render in this process is a promise of what it stored; one in
 * another process (a worker, an instance) is a lease in KV, polled for the page it stores. Every
 * wait ends by a time and when its request is abandoned: the caller then renders the page itself.
 * A lease its holder stops renewing (it died) ends the wait sooner: `LEASE_LAPSE_MS` after the
 * waiter first saw that lease (shared.ts says why on the waiter's own clock). No request waits on
 * a stale page's render in the background, so its stale hits note each look at its lease
 * (`lapseWatch`) to tell its holder's death the same way.
 */
import { LEASE_LAPSE_MS } from "./shared.ts";

/** The first gap between two looks at KV, and the longest: a few looks a second at most. */
const FIRST_GAP_MS = 5;
const MAX_GAP_MS = 500;
const GROWTH = 1.25;

/**
 * What `rendering` gives, or undefined once `until` (on `performance.now()`'s clock) passed or
 * `signal` aborted - or when it rejects.
 */
export function within<T>(
  rendering: Promise<T | undefined>,
  until: number,
  signal: AbortSignal,
): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const done = (value?: T) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", gone);
      resolve(value);
    };
    const gone = () => done();
    const timer = setTimeout(gone, Math.max(0, until - performance.now()));
    signal.addEventListener("abort", gone);
    rendering.then(done, gone);
  });
}

/** A look at KV: the page if it is there and live, and its lease's versionstamp if one is held. */
export type Peek<T> = () => Promise<{ page?: T; lease?: string }>;

/**
 * Looks (`peek`) until the page is there, its lease is gone without it (that render stored
 * nothing: a failure, a page that may not be stored) or lapsed (`lapsed`: its versionstamp, for
 * the caller to take it over), `until` passed or `signal` aborted; the gaps grow from 5 ms to
 * 500 ms, a look falls due when the lease seen would lapse, and `wakeOn` (stored_push.ts) ends one
 * early. Without the page, the caller renders it.
 */
export async function pollFor<T>(
  peek: Peek<T>,
  until: number,
  signal: AbortSignal,
  wakeOn?: (wake: () => void) => () => void,
): Promise<{ page?: T; lapsed?: string }> {
  let woken = false;
  let resume: (() => void) | undefined;
  const stop = wakeOn?.(() => {
    woken = true;
    resume?.();
  });
  /** The lease last seen, and when it would lapse unless renewed. */
  let seen: { lease: string; lapsesAt: number } | undefined;
  try {
    for (let gap = FIRST_GAP_MS;; gap = Math.min(gap * GROWTH, MAX_GAP_MS)) {
      const now = performance.now();
      const wait = Math.min(gap, until - now, (seen?.lapsesAt ?? Infinity) - now);
      if (until <= now || signal.aborted) return {};
      // Woken while the last look was under way: that look may have read before the write.
      if (!woken && wait > 0) await pause(wait, signal, (done) => resume = done);
      resume = undefined;
      woken = false;
      const { page, lease } = await peek();
      if (page || !lease) return { page };
      if (lease !== seen?.lease) {
        seen = { lease, lapsesAt: performance.now() + LEASE_LAPSE_MS };
      } else if (performance.now() >= seen.lapsesAt) return { lapsed: lease };
    }
  } finally {
    stop?.();
  }
}

/**
 * Leases seen, one per page key (`max` keys at most, then it starts afresh): `lapsed` tells when
 * the lease seen for a key went unchanged - unrenewed - for `LEASE_LAPSE_MS` of this process's
 * clock since it was first seen.
 */
export function lapseWatch(max: number) {
  const seen = new Map<string, { lease: string; lapsesAt: number }>();
  return {
    lapsed(key: string, lease: string): boolean {
      const now = performance.now();
      const last = seen.get(key);
      if (last?.lease === lease) return now >= last.lapsesAt;
      if (seen.size >= max) seen.clear(); // bounded whatever pages clients ask for
      seen.set(key, { lease, lapsesAt: now + LEASE_LAPSE_MS });
      return false;
    },
    forget(key: string): void {
      seen.delete(key);
    },
  };
}

/**
 * Resolves after `ms`, when `signal` aborts, or when the function handed to `resumer` is called.
 */
function pause(
  ms: number,
  signal: AbortSignal,
  resumer: (done: () => void) => void,
): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
    resumer(done);
  });
}
