/**
 * @module
 * Tag versions: `revalidateTag(tag)` adds one to the tag's counter in Deno KV
 * (`["page_cache_tags", tag]`), and a stored page carries the versions of its tags from when its
 * render began; a page whose versions are no longer current is dropped. Each process keeps the
 * versions of the tags its requests used (at most `MAX_TRACKED`, least recently used out first) and
 * reads a tag again, batched with the others a request needs, when a request needs it and its
 * version is older than `checkMs` - so a tag revalidated anywhere (another worker, another
 * instance) is seen by every process within `checkMs` plus one KV read, a hot tag costs one read
 * per `checkMs` whatever the traffic, and an idle process reads nothing (no polling: on Deno
 * Deploy an isolate with no requests costs no KV reads). The process that revalidates sees it at
 * once; the isolates its `BroadcastChannel` reaches (tag_push.ts: the other `deno serve
 * --parallel` workers) read the tag at their next request, without waiting for `checkMs`. Not
 * `kv.watch`: on a local SQLite file it never reports another process's writes (measured,
 * docs/caching.md), and `deno serve --parallel` is such a set of processes. */
import { commit } from "../kv/commit.ts";
import { announceTagMoved, onTagMoved } from "./tag_push.ts";

const PREFIX = "page_cache_tags";
/** KV's `getMany` reads at most 10 keys. */
const BATCH = 10;
/** Tags one process keeps versions of: per-entity tags (`post:42`) are as many as the entities. */
export const MAX_TRACKED = 10_000;

export interface TagVersions {
  /** Resolves once each of `tags` is at most `checkMs` old; undefined when they all are already. */
  fresh(tags: readonly string[]): Promise<void> | undefined;
  /** Each of `tags` with its version as this process knows it. */
  snapshot(tags: readonly string[]): Record<string, number>;
  /** Whether `versions` (a stored page's) are all still current; a tag not known is not. */
  current(versions: Record<string, number>): boolean;
  /** Stops listening to other isolates' revalidations (tag_push.ts). */
  close(): void;
}

interface Known {
  version: number;
  /** When the read that gave `version` began (`performance.now()`). */
  readAt: number;
  reading?: Promise<void>;
  /** When the read in flight began. */
  readingAt?: number;
  /** When another isolate said the tag moved: a read that began before is not enough. */
  movedAt?: number;
}

type Clock = Map<string, Known>;

/** The clocks of every app in this process, by store: `revalidateTag` moves its own at once. */
const clocks = new WeakMap<Deno.Kv, Set<Clock>>();

export function tagVersions(kv: Deno.Kv, checkMs: number): TagVersions {
  const clock: Clock = new Map();
  let set = clocks.get(kv);
  if (!set) clocks.set(kv, set = new Set());
  set.add(clock);

  const read = async (tags: string[]) => {
    const began = performance.now();
    const entries = await kv.getMany<Deno.KvU64[]>(tags.map((tag) => [PREFIX, tag]));
    for (const { key, value } of entries) {
      const tag = String(key[1]);
      const known = clock.get(tag);
      const version = Number(value?.value ?? 0n);
      // Versions only grow: a read that began before a revalidation cannot take it back.
      track(clock, tag, {
        version: Math.max(known?.version ?? 0, version),
        readAt: began,
        movedAt: known?.movedAt !== undefined && known.movedAt >= began ? known.movedAt : undefined,
      });
    }
  };
  const stopListening = onTagMoved((tag) => {
    const known = clock.get(tag);
    if (known) known.movedAt = performance.now();
  });

  return {
    fresh(tags) {
      const now = performance.now();
      const waits: Promise<void>[] = [];
      let due: string[] | undefined;
      for (const tag of tags) {
        const known = clock.get(tag);
        const moved = known?.movedAt !== undefined &&
          known.movedAt >= (known.reading ? known.readingAt! : known.readAt);
        if (known?.reading && !moved) waits.push(known.reading);
        else if (!known || moved || now - known.readAt >= checkMs) (due ??= []).push(tag);
      }
      for (let i = 0; due && i < due.length; i += BATCH) {
        const batch = due.slice(i, i + BATCH);
        const reading: Promise<void> = read(batch).finally(() => {
          for (const tag of batch) {
            const known = clock.get(tag);
            if (known?.reading === reading) delete known.reading;
          }
        });
        for (const tag of batch) {
          const known = clock.get(tag);
          if (known) Object.assign(known, { reading, readingAt: now });
          else track(clock, tag, { version: 0, readAt: -Infinity, reading, readingAt: now });
        }
        waits.push(reading);
      }
      if (waits.length === 0) return undefined;
      return waits.length === 1 ? waits[0] : Promise.all(waits).then(() => undefined);
    },
    snapshot(of) {
      return Object.fromEntries(of.map((tag) => [tag, clock.get(tag)?.version ?? 0]));
    },
    current(versions) {
      for (const tag in versions) {
        const known = clock.get(tag);
        // A page rendered elsewhere may know a newer version than this process yet.
        if (!known || known.readAt === -Infinity || !(versions[tag] >= known.version)) return false;
      }
      return true;
    },
    close: stopListening,
  };
}

/** Adds `tag` as the most recently used, dropping the least recently used past the bound. */
function track(clock: Clock, tag: string, known: Known): void {
  clock.delete(tag);
  clock.set(tag, known);
  if (clock.size > MAX_TRACKED) clock.delete(clock.keys().next().value!);
}

/**
 * Adds one to `tag`'s version in `kv`; this isolate's apps on `kv` see it at once, and the other
 * isolates the channel reaches are told to read it at their next request.
 */
export async function bumpTag(kv: Deno.Kv, tag: string): Promise<void> {
  const key = [PREFIX, tag];
  for (let attempt = 0; attempt < 10; attempt++) {
    // `sum` never conflicts; only SQLite's lock between handles can make a commit fail here.
    if ((await commit(kv.atomic().sum(key, 1n))).ok) break;
    if (attempt === 9) throw new Error(`revalidateTag(${JSON.stringify(tag)}): KV stayed busy`);
    await new Promise((resolve) => setTimeout(resolve, 5 * (attempt + 1)));
  }
  announceTagMoved(tag);
  const began = performance.now();
  const { value } = await kv.get<Deno.KvU64>(key);
  const version = Number(value?.value ?? 0n);
  for (const clock of clocks.get(kv) ?? []) {
    const known = clock.get(tag);
    // That read counts as the tag's check: the next request needs none.
    if (known) Object.assign(known, { version: Math.max(known.version, version), readAt: began });
    else track(clock, tag, { version, readAt: began });
  }
}
