/**
 * @module
 * Tag versions: `revalidateTag(tag)` adds one to the tag's counter in Deno KV
 * (`["page_cache_tags", tag]`), and a stored page carries the versions of its tags from when its
 * render began; a page whose versions are no longer current is dropped. Each process keeps the
 * versions of the tags its routes declare and reads them again, all at once, when a request needs
 * them and they are older than `checkMs` — so a tag revalidated anywhere (another worker, another
 * instance) is seen by every process within `checkMs` plus one KV read, and an idle process reads
 * nothing (no polling: on Deno Deploy an isolate with no requests costs no KV reads). The process
 * that revalidates sees it at once.
 */
import { commit } from "../kv/commit.ts";

const PREFIX = "page_cache_tags";
/** KV's `getMany` reads at most 10 keys. */
const BATCH = 10;

export interface TagVersions {
  /** Resolves once the versions are at most `checkMs` old; undefined when they are already. */
  fresh(): Promise<void> | undefined;
  /** Each of `tags` with its current version. */
  snapshot(tags: readonly string[]): Record<string, number>;
  /** Whether `versions` (a stored page's) are all still current. */
  current(versions: Record<string, number>): boolean;
}

interface Clock {
  versions: Map<string, number>;
  readAt: number;
  reading?: Promise<void>;
}

/** The clocks of every app in this process, by store: `revalidateTag` moves its own at once. */
const clocks = new WeakMap<Deno.Kv, Set<Clock>>();

export function tagVersions(kv: Deno.Kv, tags: readonly string[], checkMs: number): TagVersions {
  const clock: Clock = { versions: new Map(tags.map((tag) => [tag, 0])), readAt: -Infinity };
  let set = clocks.get(kv);
  if (!set) clocks.set(kv, set = new Set());
  set.add(clock);
  const read = async () => {
    const began = performance.now();
    for (let i = 0; i < tags.length; i += BATCH) {
      const entries = await kv.getMany<Deno.KvU64[]>(
        tags.slice(i, i + BATCH).map((tag) => [PREFIX, tag]),
      );
      for (const { key, value } of entries) advance(clock, String(key[1]), value);
    }
    clock.readAt = began;
  };
  return {
    fresh() {
      if (tags.length === 0 || performance.now() - clock.readAt < checkMs) return undefined;
      return clock.reading ??= read().finally(() => clock.reading = undefined);
    },
    snapshot(of) {
      return Object.fromEntries(of.map((tag) => [tag, clock.versions.get(tag) ?? 0]));
    },
    current(versions) {
      for (const tag in versions) {
        // A page rendered elsewhere may know a newer version than this process yet.
        if (!(versions[tag] >= (clock.versions.get(tag) ?? 0))) return false;
      }
      return true;
    },
  };
}

/** Adds one to `tag`'s version in `kv`; this process's apps on `kv` see it at once. */
export async function bumpTag(kv: Deno.Kv, tag: string): Promise<void> {
  const key = [PREFIX, tag];
  for (let attempt = 0; attempt < 10; attempt++) {
    // `sum` never conflicts; only SQLite's lock between handles can make a commit fail here.
    if ((await commit(kv.atomic().sum(key, 1n))).ok) break;
    if (attempt === 9) throw new Error(`revalidateTag(${JSON.stringify(tag)}): KV stayed busy`);
    await new Promise((resolve) => setTimeout(resolve, 5 * (attempt + 1)));
  }
  const { value } = await kv.get<Deno.KvU64>(key);
  for (const clock of clocks.get(kv) ?? []) advance(clock, tag, value);
}

/** Versions only grow: a read that began before a revalidation cannot take it back. */
function advance(clock: Clock, tag: string, value: Deno.KvU64 | null): void {
  const version = Number(value?.value ?? 0n);
  if (clock.versions.has(tag) && version > clock.versions.get(tag)!) {
    clock.versions.set(tag, version);
  }
}
