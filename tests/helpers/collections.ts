/**
 * @module
 * What a collection's keys must say, read straight from KV (`lib/kv/collection/declared.ts` has the
 * layout): every item has exactly the index entries its index values call for, each a copy from
 * the same commit (same versionstamp), and no entry is there without its item; and each change log
 * is numbered 1…latest with no gap, its events replaying to the items as they are. And a store
 * that fails its n-th call, for writes interrupted at every step.
 */
import assert from "node:assert/strict";

export interface IndexRule {
  key: (item: Record<string, unknown>) => Deno.KvKeyPart | undefined | null;
  unique?: boolean;
}

type Stored = { key: Deno.KvKey; value: unknown; versionstamp: string };

const show = (key: Deno.KvKey) =>
  JSON.stringify(key, (_, part) => typeof part === "bigint" ? `${part}n` : part);

/** Every entry under `[name]`, in key order. */
export async function entriesOf(kv: Deno.Kv, name: string): Promise<Stored[]> {
  const all: Stored[] = [];
  for await (const entry of kv.list({ prefix: [name] })) all.push(entry);
  return all;
}

/**
 * Asserts that the collection `name` is consistent: its index entries match its items one to one,
 * and its change logs (all of them, unless `expired`) are gapless and replay to its items.
 * Returns the items by id.
 */
export async function assertConsistent(
  kv: Deno.Kv,
  name: string,
  indexes: Record<string, IndexRule>,
  { expired = false }: { expired?: boolean } = {},
): Promise<Map<string, Stored>> {
  const entries = await entriesOf(kv, name);
  const items = new Map<string, Stored>();
  const indexEntries = new Map<string, Stored>();
  const logs = new Map<string, { latest?: number; events: Map<number, Stored> }>();
  const logOf = (base: Deno.KvKey) => {
    const id = show(base);
    let log = logs.get(id);
    if (!log) logs.set(id, log = { events: new Map() });
    return log;
  };
  for (const entry of entries) {
    const [, kind] = entry.key;
    if (kind === "items") items.set(entry.key[2] as string, entry);
    else if (kind === "index" || kind === "unique") indexEntries.set(show(entry.key), entry);
    else if (kind === "log" || kind === "logs") {
      const at = entry.key.indexOf("latest") >= 0 ? entry.key.length - 1 : entry.key.length - 2;
      const base = entry.key.slice(0, at);
      if (entry.key[at] === "latest") logOf(base).latest = entry.value as number;
      else logOf(base).events.set(entry.key[at + 1] as number, entry);
    } else assert.fail(`an unexpected key ${show(entry.key)}`);
  }

  // Items → index entries.
  const expected = new Set<string>();
  for (const [id, item] of items) {
    for (const [index, rule] of Object.entries(indexes)) {
      const value = rule.key(item.value as Record<string, unknown>) ?? undefined;
      if (value === undefined) continue;
      const key = rule.unique ? [name, "unique", index, value] : [name, "index", index, value, id];
      const found = indexEntries.get(show(key));
      assert.ok(found, `item ${id} has no entry ${show(key)}`);
      if (rule.unique) {
        const held = found.value as { id: string; value: unknown };
        assert.equal(held.id, id, `${show(key)} names another item`);
        assert.deepEqual(held.value, item.value, `${show(key)} copy`);
      } else assert.deepEqual(found.value, item.value, `${show(key)} copy`);
      assert.equal(found.versionstamp, item.versionstamp, `${show(key)} is of another commit`);
      expected.add(show(key));
    }
  }
  // Index entries → items.
  for (const key of indexEntries.keys()) assert.ok(expected.has(key), `orphan entry ${key}`);

  // Logs: numbered 1…latest, and the collection's replays to the items.
  for (const [id, log] of logs) {
    const numbers = [...log.events.keys()].sort((a, b) => a - b);
    assert.equal(log.latest ?? 0, numbers.at(-1) ?? 0, `${id}: latest`);
    if (!expired) assert.deepEqual(numbers, numbers.map((_, i) => i + 1), `${id}: gapless`);
  }
  if (!expired) {
    const log = logs.get(show([name, "log"]));
    const replayed = new Map<string, unknown>();
    for (const n of [...(log?.events.keys() ?? [])].sort((a, b) => a - b)) {
      const { op, id, value } = log!.events.get(n)!.value as {
        op: string;
        id: string;
        value: unknown;
      };
      if (op === "delete") replayed.delete(id);
      else replayed.set(id, value);
    }
    assert.deepEqual(
      replayed,
      new Map([...items].map(([id, item]) => [id, item.value])),
      "the collection's log replays to its items",
    );
  }
  return items;
}

/** The store, failing the `failAt`-th read or commit with an error of KV's kind. */
export function failing(kv: Deno.Kv, failAt: number): { kv: Deno.Kv; calls: () => number } {
  let calls = 0;
  const tick = () => {
    if (++calls === failAt) throw new TypeError("injected: the disk went away");
  };
  const proxy = new Proxy(kv, {
    get(target, prop) {
      if (prop === "get" || prop === "getMany") {
        // deno-lint-ignore no-explicit-any
        return async (...args: any[]) => {
          tick();
          // deno-lint-ignore no-explicit-any
          return await (target[prop] as any)(...args);
        };
      }
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          return new Proxy(op, {
            get(o, p) {
              if (p === "commit") {
                return async () => {
                  tick();
                  return await o.commit();
                };
              }
              const value = Reflect.get(o, p);
              return typeof value === "function" ? value.bind(o) : value;
            },
          });
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: proxy, calls: () => calls };
}
