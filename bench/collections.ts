/**
 * @module
 * Collections on Deno KV (`shell/data`'s `collection()`): writes and indexed reads per second for a
 * collection with two indexes (one non-unique, one unique) on a KV file, in this process — the
 * cost of the item, its index copies and its change events in one commit; and how long an update
 * takes to reach 1,000 open pages: that many event streams of `changeStream` held open on raw
 * loopback connections to a server (`deno task start`, the tests' live fixture), one update made
 * through its API, timed until every stream has it. Bounded: each phase runs for `seconds`, at
 * most `streams` connections, every wait with a deadline.
 */
import { join } from "node:path";
import * as v from "valibot";
import { collection } from "../lib/kv/collection/collection.ts";
import { cardsApi, liveProject } from "../tests/helpers/live_fixture.ts";
import { rssMb, start } from "./process.ts";
import { fmt, type Row } from "./report.ts";

export interface CollectionOptions {
  seconds: number;
  /** Event streams held open for the fan-out. */
  streams: number;
  progress(message: string): void;
}

export interface CollectionResults {
  writes: { createPerSec: number; updatePerSec: number };
  reads: { listPerSec: number; findPerSec: number };
  fanOut: { streams: number; ms: number[]; rssBeforeMb: number; rssAfterMb: number };
}

/** Writers (and readers) at once: within a process a collection's writes take turns anyway. */
const CONCURRENCY = 16;

const tasks = collection("bench_tasks", {
  schema: v.object({
    title: v.pipe(v.string(), v.maxLength(120)),
    board: v.string(),
    state: v.picklist(["todo", "doing", "done"]),
  }),
  indexes: { byBoard: { key: "board" }, byTitle: { key: "title", unique: true } },
});

/** Runs `work` from `CONCURRENCY` loops for `seconds`; returns how many it did per second. */
async function perSecond(seconds: number, work: (i: number) => Promise<unknown>): Promise<number> {
  let done = 0;
  const until = performance.now() + seconds * 1000;
  const began = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < until) await work(done++);
  }));
  return done / ((performance.now() - began) / 1000);
}

export async function measureCollections(
  { seconds, streams, progress }: CollectionOptions,
): Promise<{ rows: Row[]; results: CollectionResults }> {
  const dir = await Deno.makeTempDir({ prefix: "bench-collections-" });
  const kv = await Deno.openKv(join(dir, "kv.sqlite3"));
  const boards = Array.from({ length: 20 }, (_, i) => `board-${i}`);
  const ids: string[] = [];
  progress("collections: creates (two indexes, a KV file)");
  const createPerSec = await perSecond(seconds, async (i) => {
    const task = await tasks.create(kv, {
      title: `task ${i}`,
      board: boards[i % 20],
      state: "todo",
    });
    ids.push(task.id);
  });
  progress("collections: updates (each moves the item to another index value)");
  const updatePerSec = await perSecond(
    seconds,
    (i) => tasks.update(kv, ids[i % ids.length], { board: boards[(i * 7) % 20] }),
  );
  progress("collections: indexed reads");
  const listPerSec = await perSecond(
    seconds,
    (i) => tasks.list(kv, { index: "byBoard", value: boards[i % 20], limit: 20 }),
  );
  const findPerSec = await perSecond(
    seconds,
    (i) => tasks.find(kv, "byTitle", `task ${i % ids.length}`),
  );
  kv.close();
  await Deno.remove(dir, { recursive: true });

  progress(`collections: an update reaching ${streams} open pages`);
  const fanOut = await fanOutTimes(streams, 5);

  const results: CollectionResults = {
    writes: { createPerSec, updatePerSec },
    reads: { listPerSec, findPerSec },
    fanOut,
  };
  const sorted = fanOut.ms.toSorted((a, b) => a - b);
  const rows: Row[] = [
    {
      measure: "Collections: writes/s, two indexes, one KV file (item + copies + events a commit)",
      value: `create ${fmt.rps(createPerSec)}/s · update ${fmt.rps(updatePerSec)}/s`,
      target: "—",
    },
    {
      measure: "Collections: indexed reads/s",
      value: `a page of 20 by index ${fmt.rps(listPerSec)}/s · one by unique value ${
        fmt.rps(findPerSec)
      }/s`,
      target: "—",
    },
    {
      measure: `Collections: an update reaching ${fanOut.streams} open pages (deno task start)`,
      value: `median ${fmt.ms(sorted[Math.floor(sorted.length / 2)])}, slowest ${
        fmt.ms(sorted.at(-1)!)
      } of ${sorted.length}; ${
        ((fanOut.rssAfterMb - fanOut.rssBeforeMb) * 1024 / fanOut.streams).toFixed(1)
      } KB RSS a stream`,
      target: "—",
    },
  ];
  return { rows, results };
}

/**
 * Holds `count` streams of the fixture's `/cards/events` open on raw connections, then makes
 * `updates` updates one after the other, timing each until every stream has it.
 */
async function fanOutTimes(count: number, updates: number): Promise<CollectionResults["fanOut"]> {
  const root = await liveProject();
  const dir = await Deno.makeTempDir({ prefix: "bench-fanout-" });
  await using server = await start(root, ["task", "start"], {
    KV_PATH: join(dir, "kv.sqlite3"),
  }, "/cards");
  const { body: card } = await cardsApi<{ id: string }>(server.origin, {
    op: "create",
    card: { title: "fan-out", column: "a", moves: 0 },
  });
  const settle = async () => {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return await rssMb(server.pid());
  };
  const rssBeforeMb = await settle();
  const { hostname, port } = new URL(server.origin);
  const encoder = new TextEncoder();
  const connections: Deno.TcpConn[] = [];
  const readers: ReadableStreamDefaultReader<string>[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const conn = await Deno.connect({ hostname, port: Number(port) });
      await conn.write(encoder.encode(
        `GET /cards/events?since=1 HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n\r\n`,
      ));
      const reader = conn.readable.pipeThrough(new TextDecoderStream()).getReader();
      let head = "";
      while (!head.includes("retry:")) head += (await reader.read()).value ?? "";
      connections.push(conn);
      readers.push(reader);
    }
    const rssAfterMb = await settle();
    const ms: number[] = [];
    for (let n = 1; n <= updates; n++) {
      const began = performance.now();
      const arrived = readers.map(async (reader) => {
        let text = "";
        while (!text.includes(`id: ${n + 1}\n`)) {
          const { value, done } = await reader.read();
          if (done) throw new Error("a stream ended");
          text += value;
        }
      });
      await cardsApi(server.origin, { op: "move", id: card.id, column: `c${n}` });
      await deadline(Promise.all(arrived), 30_000, `update ${n} did not reach every stream`);
      ms.push(performance.now() - began);
    }
    return { streams: count, ms, rssBeforeMb, rssAfterMb };
  } finally {
    for (const reader of readers) await reader.cancel().catch(() => {});
    for (const conn of connections) {
      try {
        conn.close();
      } catch { /* closed with its reader */ }
    }
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

function deadline<T>(work: Promise<T>, ms: number, why: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => timer = setTimeout(() => reject(new Error(why)), ms)),
  ]).finally(() => clearTimeout(timer));
}
