/**
 * @module
 * `deno task kv:reindex <collection>` (`lib/cli/kv_reindex.ts`) on a store file as the server's:
 * it finds the collection among those the app's modules declare (the board's `tasks`, imported by
 * its routes) and makes its entries as the app now declares them - here, a `byState` index the
 * tasks were stored with and the app no longer has: its entries and logs go. A name the app does
 * not declare ends with exit 1 and the names it does. Stopped with a real SIGINT (Ctrl-C), it
 * prints its counts so far, says the next run goes on from there, and exits 130.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { collection } from "../../../lib/data.ts";
import { PROJECT_ROOT } from "../../../lib/cli/root.ts";
import { tempStore } from "../../helpers/kv.ts";

async function reindexTask(path: string, ...args: string[]) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "lib/cli/kv_reindex.ts", ...args],
    cwd: PROJECT_ROOT,
    env: { KV_PATH: path, NO_COLOR: "1" },
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes).trim();
  return { code, out: text(stdout), err: text(stderr) };
}

/**
 * The store file at `path` given 300 stale index entries (as an earlier declaration's writes left
 * them), and the task reindexing it an entry a batch, once it has told of its first batch done.
 */
async function reindexUnderWay(path: string) {
  {
    using kv = await Deno.openKv(path);
    const op = kv.atomic(); // one commit: the seed is fast
    for (let i = 0; i < 300; i++) {
      op.set(["tasks", "index", "byState", "todo", `01J${String(i).padStart(23, "0")}`], { i });
    }
    await op.commit();
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "lib/cli/kv_reindex.ts", "tasks", "--batch", "1"],
    cwd: PROJECT_ROOT,
    env: { KV_PATH: path, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = new Response(child.stdout).text();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).values();
  let told = "";
  while (!/stale entries removed/.test(told)) {
    const { value, done } = await lines.next();
    assert.ok(!done, `ended before a batch: ${told}`);
    told += value;
  }
  return { child, out, lines, told };
}

/** The board's tasks as an earlier version of the app declared them: with an index by state. */
const earlier = collection("tasks", {
  schema: v.object({ title: v.string(), state: v.picklist(["todo", "doing", "done"]) }),
  indexes: { byState: { key: "state" } },
});

Deno.test("deno task kv:reindex finds the app's collection by name and drops the entries it no longer declares", async () => {
  await using store = await tempStore();
  const path = store.path;
  {
    using kv = await Deno.openKv(path);
    for (const title of ["a", "b", "c"]) await earlier.create(kv, { title, state: "todo" });
  }
  const done = await reindexTask(path, "tasks", "--batch", "2");
  assert.equal(done.code, 0, done.err);
  assert.equal(
    done.out.split("\n").at(-1), // after the build's line, when the sources changed since
    "tasks: 3 items read, 0 indexed again, 3 stale entries removed, 0 collisions, 0 refused",
  );
  assert.match(done.err, /kv:reindex tasks: 2 stale entries removed, 0 items read/);
  const told = done.err.split("\n").filter((line) => line.startsWith("kv:reindex tasks:"));
  assert.deepEqual(told, [...new Set(told)], "each progress line once");
  using kv = await Deno.openKv(path);
  const left = await Array.fromAsync(kv.list({ prefix: ["tasks"] }));
  assert.deepEqual(new Set(left.map(({ key }) => key[1])), new Set(["items", "log"]));

  const unknown = await reindexTask(path, "taks");
  assert.equal(unknown.code, 1);
  assert.match(unknown.err, /the app declares no collection "taks" \(it declares: .*\btasks\b/);
  assert.equal((await reindexTask(path)).code, 2, "no name: the usage");
});

Deno.test("deno task kv:reindex killed half-way goes on from there when run again, and finishes", async () => {
  await using store = await tempStore();
  const path = store.path;
  const { child, out, lines } = await reindexUnderWay(path);
  // Killed (no chance to clean up) once it has told of its first batch done.
  child.kill("SIGKILL");
  await lines.return?.();
  await out;
  assert.equal((await child.status).signal, "SIGKILL");
  {
    using kv = await Deno.openKv(path);
    const left = await Array.fromAsync(kv.list({ prefix: ["tasks", "index"] }));
    assert.ok(left.length > 0 && left.length < 300, `stopped half-way: ${left.length} left`);
    assert.ok((await kv.get(["tasks", "reindex"])).value, "where it was is kept");
  }

  const again = await reindexTask(path, "tasks");
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /\(went on from a stopped run\)$/);
  using kv = await Deno.openKv(path);
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["tasks"] })), []);
});

Deno.test("deno task kv:reindex stopped with Ctrl-C says how far it got and that the next run goes on from there", async () => {
  await using store = await tempStore();
  const path = store.path;
  const { child, out, lines, told } = await reindexUnderWay(path);
  let err = told;
  child.kill("SIGINT");
  for await (const value of lines) err += value;
  assert.equal((await child.status).code, 130, err);

  const left = async () => {
    using kv = await Deno.openKv(path);
    return (await Array.fromAsync(kv.list({ prefix: ["tasks", "index"] }))).length;
  };
  const removed = 300 - await left();
  assert.ok(removed > 0 && removed < 300, `stopped half-way: ${removed} removed`);
  assert.equal(
    (await out).trim().split("\n").at(-1),
    `tasks: 0 items read, 0 indexed again, ${removed} stale entries removed, 0 collisions, ` +
      "0 refused so far (stopped)",
  );
  assert.match(err, /kv:reindex tasks: stopped; run it again to go on from the last batch done/);
  const again = await reindexTask(path, "tasks");
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /\(went on from a stopped run\)$/);
  assert.equal(await left(), 0);
});
