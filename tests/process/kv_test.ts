/**
 * @module
 * The KV building blocks on real stores (`:memory:` and temp files, never `.data/`): opening a
 * store and why it fails, where the settings put it, KV's size limits checked exactly, commits
 * that lose a race between handles, the append-only log (ids in commit order, gap-free across
 * handles), and the one-time claim of a form's state.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../lib/cli/root.ts";
import { DEFAULT_KV_PATH, readSettings } from "../../lib/cli/settings.ts";
import { storePath } from "../../lib/cli/store.ts";
import { claimInKv } from "../../lib/kv/claim.ts";
import { commit, KvBusyError, retrying } from "../../lib/kv/commit.ts";
import {
  assertFits,
  keySize,
  KvLimitError,
  MAX_KEY_BYTES,
  MAX_VALUE_BYTES,
  valueSize,
} from "../../lib/kv/limits.ts";
import { after, append, kvLog, newest } from "../../lib/kv/log.ts";
import { openStore, StoreOpenError } from "../../lib/kv/store.ts";
import { holdWriteLock, tempStore } from "../helpers/kv.ts";
import { tempDir } from "../helpers/temp_dir.ts";

async function openError(path: string, timeoutMs?: number): Promise<StoreOpenError> {
  try {
    (await openStore(path, { timeoutMs })).close();
  } catch (error) {
    assert.ok(error instanceof StoreOpenError, `not a StoreOpenError: ${error}`);
    return error;
  }
  throw new Error(`${path} opened`);
}

Deno.test("openStore: :memory:, and a file whose folders it creates; data survives reopening", async () => {
  const memory = await openStore(":memory:");
  await memory.set(["a"], 1);
  assert.equal((await memory.get(["a"])).value, 1);
  memory.close();

  await using store = await tempStore();
  const path = join(store.dir, "x/deeper/still/kv.sqlite3");
  const kv = await openStore(path);
  await kv.set(["a"], "kept");
  kv.close();
  const again = await openStore(path);
  assert.equal((await again.get(["a"])).value, "kept");
  again.close();
});

Deno.test("openStore: processes opening one new file at the same moment all open it", async () => {
  const store = new URL("../../lib/kv/store.ts", import.meta.url).href;
  // Started first, released together by a line on stdin: they open at once however slowly each
  // process started.
  const code = `import { openStore } from "${store}";
    console.log("ready");
    for await (const _ of Deno.stdin.readable) break;
    try { (await openStore(Deno.env.get("KV"))).close(); console.log("opened"); }
    catch (error) { console.log(error.message); }`;
  for (let round = 0; round < 3; round++) {
    await using store = await tempStore();
    const path = join(store.dir, ".data/kv.sqlite3"); // its folders are new too
    const children = Array.from({ length: 4 }, () =>
      new Deno.Command(Deno.execPath(), {
        args: ["eval", "--unstable-kv", "--ext=ts", code],
        env: { KV: path },
        stdin: "piped",
        stdout: "piped",
      }).spawn());
    const outputs = children.map((child) =>
      child.stdout.pipeThrough(new TextDecoderStream()).getReader()
    );
    const texts = children.map(() => "");
    const lineOf = async (i: number, n: number) => {
      while (texts[i].split("\n").length <= n + 1) {
        const { value, done } = await outputs[i].read();
        if (done) break;
        texts[i] += value;
      }
      return texts[i].split("\n")[n];
    };
    assert.deepEqual(await Promise.all(children.map((_, i) => lineOf(i, 0))), [
      "ready",
      "ready",
      "ready",
      "ready",
    ]);
    await Promise.all(children.map(async (child) => {
      const stdin = child.stdin.getWriter();
      await stdin.write(new TextEncoder().encode("go\n"));
      await stdin.close();
    }));
    const said = await Promise.all(children.map((_, i) => lineOf(i, 1)));
    await Promise.all(children.map((child) => child.status));
    await Promise.all(outputs.map((output) => output.cancel()));
    assert.deepEqual(said, ["opened", "opened", "opened", "opened"], `round ${round + 1}`);
  }
});

Deno.test("openStore: a new file another process holds past SQLite's busy timeout opens once it lets go", async () => {
  // Deno.openKv sets up a new file outside KV's own retry on a busy database: it gives up with
  // "database is locked" after SQLite's busy timeout (5 s), as a handle racing another to create
  // the file can at once. openStore tries again within its deadline. (~7 s: the timeout itself.)
  await using store = await tempStore();
  const path = store.path;
  const sqlite = new Deno.Command("sqlite3", {
    args: [path],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const stdin = sqlite.stdin.getWriter();
  const encoder = new TextEncoder();
  await stdin.write(encoder.encode(
    "CREATE TABLE held(x);\nBEGIN EXCLUSIVE;\nINSERT INTO held VALUES(1);\nSELECT 'LOCKED';\n",
  ));
  const out = sqlite.stdout.pipeThrough(new TextDecoderStream()).getReader();
  for (let text = ""; !text.includes("LOCKED");) {
    const read = await out.read();
    if (read.done) throw new Error("sqlite3 ended before taking the lock");
    text += read.value;
  }
  const opening = openStore(path, { timeoutMs: 20_000 });
  // Released after the busy timeout has made a first attempt fail.
  setTimeout(() => stdin.write(encoder.encode("COMMIT;\n")).then(() => stdin.close()), 6_000);
  try {
    const kv = await opening;
    await kv.set(["after"], true);
    assert.equal((await kv.get(["after"])).value, true);
    kv.close();
  } finally {
    await opening.catch(() => {});
    await out.cancel();
    await sqlite.status;
  }
});

Deno.test("openStore names the path and the cause when the store is unusable", async (t) => {
  await t.step("an empty path", async () => {
    assert.equal((await openError("")).message, "Cannot use the KV store at : the path is empty");
  });
  await t.step("a directory", async () => {
    await using dir = await tempDir();
    assert.equal(
      (await openError(dir.path)).message,
      `Cannot use the KV store at ${dir.path}: it is a directory`,
    );
  });
  await t.step("a folder that cannot be created", async () => {
    await using store = await tempStore("plain-file");
    const file = store.path;
    await Deno.writeTextFile(file, "x");
    const error = await openError(`${file}/kv.sqlite3`);
    assert.match(
      error.message,
      /^Cannot use the KV store at .*plain-file\/kv\.sqlite3: cannot create its folder .*plain-file: /,
    );
  });
  await t.step("a file that is not a database", async () => {
    await using store = await tempStore();
    const path = store.path;
    await Deno.writeTextFile(path, "this is not a sqlite file at all ".repeat(200));
    assert.equal(
      (await openError(path)).message,
      `Cannot use the KV store at ${path}: the file is not a usable Deno KV (SQLite) database ` +
        "(file is not a database); move it away or restore a backup",
    );
  });
  await t.step({
    name: "a read-only file: refused at open, where it would open and then refuse every write",
    // As root, permissions do not bite: the check runs as `nobody` (`setpriv`).
    fn: async () => {
      await using temp = await tempDir();
      const dir = temp.path;
      await Deno.chmod(dir, 0o777);
      // store.ts imports nothing: a copy `nobody` can read runs on its own.
      await Deno.copyFile(new URL("../../lib/kv/store.ts", import.meta.url), `${dir}/store.ts`);
      await Deno.chmod(`${dir}/store.ts`, 0o644);
      const db = `${dir}/ro.sqlite3`;
      (await openStore(db)).close();
      await Deno.chmod(db, 0o444);
      for (const suffix of ["-wal", "-shm"]) await Deno.chmod(db + suffix, 0o666).catch(() => {});
      const script = `import { openStore } from "${dir}/store.ts";
        try { await openStore("${db}"); console.log("opened"); } catch (e) { console.log(e.message); }`;
      const deno = [Deno.execPath(), "eval", "--unstable-kv", "--ext=ts", script];
      const command = Deno.uid() === 0
        ? new Deno.Command("setpriv", {
          args: ["--reuid=65534", "--regid=65534", "--clear-groups", ...deno],
          env: { DENO_DIR: `${dir}/deno`, HOME: dir },
        })
        : new Deno.Command(deno[0], { args: deno.slice(1) });
      const out = new TextDecoder().decode((await command.output()).stdout).trim();
      assert.equal(
        out,
        `Cannot use the KV store at ${db}: Permission denied (os error 13): open '${db}' ` +
          "(Can not write to a read-only database.)",
      );
    },
  });
  await t.step({
    name: "a file another process keeps write-locked: the deadline names the likely cause",
    fn: async () => {
      await using store = await tempStore();
      const path = store.path;
      (await openStore(path)).close();
      const lock = await holdWriteLock(path);
      try {
        assert.equal(
          (await openError(path, 1000)).message,
          `Cannot use the KV store at ${path}: no answer within 1000 ms; ` +
            "is another process holding a lock on the file (sqlite3, a backup tool)?",
        );
      } finally {
        await lock.release();
      }
      (await openStore(path)).close(); // once released, it opens
    },
  });
});

Deno.test("settings: .data/ under the project by default, Deploy's managed KV there, KV_PATH wins", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.equal(readSettings(env({})).kvPath, DEFAULT_KV_PATH);
  assert.equal(readSettings(env({ DENO_DEPLOYMENT_ID: "abc" })).kvPath, undefined);
  assert.equal(readSettings(env({ KV_PATH: ":memory:" })).kvPath, ":memory:");
  assert.equal(storePath(DEFAULT_KV_PATH), join(PROJECT_ROOT, ".data/kv.sqlite3"));
  assert.equal(storePath("/srv/kv.sqlite3"), "/srv/kv.sqlite3");
  assert.equal(storePath(":memory:"), ":memory:");
  assert.equal(storePath(undefined), undefined);
});

async function kvTakes(kv: Deno.Kv, key: Deno.KvKey, value: unknown = 1): Promise<boolean> {
  try {
    await kv.set(key, value);
    return true;
  } catch {
    return false;
  }
}

Deno.test("keySize and valueSize agree with KV at its limits, byte for byte", async () => {
  const kv = await Deno.openKv(":memory:");
  const keys: ((n: number) => Deno.KvKey)[] = [
    (n) => ["rate_limit", "a".repeat(n)],
    (n) => ["x", "\0".repeat(n)],
    (n) => ["é", 42, 7n, true, "€".repeat(n)],
    (n) => [new Uint8Array(n).fill(0), 1.5],
  ];
  for (const key of keys) {
    let n = 0;
    while (keySize(key(n + 1)) <= MAX_KEY_BYTES) n++;
    assert.equal(await kvTakes(kv, key(n)), true, `${key(n).length} parts, n=${n}`);
    assert.equal(await kvTakes(kv, key(n + 1)), false);
    assert.throws(() => assertFits(key(n + 1)), KvLimitError);
  }
  for (const unit of ["a", "€", "😀"]) {
    const value = (n: number) => ({ text: unit.repeat(n), at: new Date(), n: 1.5 });
    let [n, high] = [0, 70_000];
    while (n < high) {
      const mid = Math.ceil((n + high) / 2);
      if (valueSize(value(mid)) <= MAX_VALUE_BYTES) n = mid;
      else high = mid - 1;
    }
    assert.equal(await kvTakes(kv, ["v"], value(n)), true);
    assert.equal(await kvTakes(kv, ["v"], value(n + 1)), false);
    assertFits(["v"], value(n));
    assert.throws(() => assertFits(["v"], value(n + 1)), /KV value too large: \d+ bytes/);
  }
  kv.close();
});

Deno.test("commit: a race lost to another handle on the file reads as { ok: false }, not a throw", async () => {
  await using store = await tempStore();
  const path = store.path;
  const handles = await Promise.all([1, 2, 3, 4].map(() => Deno.openKv(path)));
  const outcomes = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
    const kv = handles[i % 4];
    const entry = await kv.get<number>(["n"]);
    return (await commit(kv.atomic().check(entry).set(["n"], (entry.value ?? 0) + 1))).ok;
  }));
  // Some won, some lost; none threw (Promise.all would have rejected).
  assert.ok(outcomes.includes(true) && outcomes.includes(false));
  handles.forEach((kv) => kv.close());
});

Deno.test("retrying gives up after its attempts with an error that says why", async () => {
  let attempts = 0;
  await assert.rejects(
    retrying("the work", () => Promise.resolve(void attempts++), 3),
    (error) => {
      assert.ok(error instanceof KvBusyError);
      assert.equal(error.message, "the work: not committed (conflicting writes)");
      assert.equal(error.attempts, 3);
      return true;
    },
  );
  assert.equal(attempts, 3);
  assert.equal(
    await retrying("x", () => Promise.resolve(attempts < 5 ? void attempts++ : "done")),
    "done",
  );
});

Deno.test("retrying: a commit refused by another handle's lock is tried again past its attempts, for a while", async () => {
  await using store = await tempStore();
  const path = store.path;
  const kv = await Deno.openKv(path);
  try {
    const lock = await holdWriteLock(path);
    let attempts = 0;
    let done: Promise<string>;
    try {
      done = retrying("the write", async (commit) => {
        attempts++;
        const entry = await kv.get(["n"]);
        return (await commit(kv.atomic().check(entry).set(["n"], 1))).ok ? "written" : undefined;
      }, 3);
      // Held until the write was tried past its three attempts (where the old code gave up), and
      // not by the clock: a loaded machine makes an attempt slow. Within the wait for a lock (2 s).
      const settled = done.then(() => true, () => true);
      const until = performance.now() + 1_500;
      while (attempts <= 3 && performance.now() < until) {
        if (await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 10))])) break;
      }
    } finally {
      await lock.release();
    }
    assert.equal(await done, "written");
    assert.ok(attempts > 3, `${attempts} attempts`);
    // A lock that outlasts the wait still ends in KvBusyError, naming it.
    const stuck = await holdWriteLock(path);
    try {
      await assert.rejects(
        retrying("the write", async (commit) => {
          const entry = await kv.get(["n"]);
          return (await commit(kv.atomic().check(entry).set(["n"], 2))).ok ? "written" : undefined;
        }, 3),
        (error) => error instanceof KvBusyError && /database is locked/.test(error.message),
      );
    } finally {
      await stuck.release();
    }
  } finally {
    kv.close();
  }
});

interface Note {
  id: number;
  text: string;
  at: Date;
}
const NOTES = kvLog<Note>(["notes"]);
const note = (kv: Deno.Kv, text: string, at = new Date()) =>
  append(kv, NOTES, (id) => ({ id, text, at }));
const texts = (notes: Note[]) => notes.map((n) => n.text);

Deno.test("log: ids 1, 2, 3… in commit order, not clock order; newest and after are range reads", async () => {
  const kv = await Deno.openKv(":memory:");
  assert.deepEqual(await note(kv, "a", new Date("2030-01-01")), {
    id: 1,
    text: "a",
    at: new Date("2030-01-01"),
  });
  await note(kv, "b", new Date("2020-01-01"));
  for (const text of ["c", "d", "e"]) await note(kv, text);
  assert.deepEqual(texts(await newest(kv, NOTES, 3)), ["e", "d", "c"]);
  assert.deepEqual(texts(await newest(kv, NOTES, 10)), ["e", "d", "c", "b", "a"]);
  assert.deepEqual(texts(await after(kv, NOTES, 2, 10)), ["c", "d", "e"]);
  assert.deepEqual(texts(await after(kv, NOTES, 0, 2)), ["d", "e"]);
  assert.deepEqual(await after(kv, NOTES, 5, 10), []);
  assert.equal((await kv.get(["notes", "latest"])).value, 5);
  assert.ok((await kv.get<Note>(["notes", "items", 1])).value!.at instanceof Date);
  kv.close();
});

Deno.test("log: concurrent appends through 4 handles on one file (like workers) get unique, gap-free ids", async () => {
  await using store = await tempStore();
  const path = store.path;
  const handles = await Promise.all([1, 2, 3, 4].map(() => Deno.openKv(path)));
  const added = await Promise.all(
    Array.from({ length: 40 }, (_, i) => note(handles[i % 4], `n${i}`)),
  );
  const ids = added.map((n) => n.id).sort((a, b) => a - b);
  assert.deepEqual(ids, Array.from({ length: 40 }, (_, i) => i + 1));
  const stored = await newest(handles[0], NOTES, 100);
  for (const n of added) assert.equal(stored.find((s) => s.id === n.id)?.text, n.text);
  handles.forEach((kv) => kv.close());
});

Deno.test("log: 1,000 concurrent appends to one log, each naming it anew (kvLog in a handler), all land", async () => {
  // A log named per request (`kvLog(["rooms", room])`, docs/data.md) is a new object each time:
  // appends queued by the object did not queue at all, raced for the counter and ran out of
  // attempts (941 of 1,000 KvBusyErrors, a 500 each). They go in turn by the log's keys.
  const kv = await Deno.openKv(":memory:");
  const results = await Promise.allSettled(
    Array.from(
      { length: 1_000 },
      (_, i) =>
        append(kv, kvLog<Note>(["rooms", "a"]), (id) => ({ id, text: `n${i}`, at: new Date(0) })),
    ),
  );
  const failed = results.filter((r) => r.status === "rejected");
  assert.equal(failed.length, 0, String((failed[0] as PromiseRejectedResult | undefined)?.reason));
  assert.equal((await kv.get(["rooms", "a", "latest"])).value, 1_000);
  kv.close();
});

Deno.test("log: an item too large for KV is refused before KV sees it; a missing counter resumes", async () => {
  const kv = await Deno.openKv(":memory:");
  await assert.rejects(note(kv, "x".repeat(70_000)), KvLimitError);
  assert.deepEqual(await newest(kv, NOTES, 5), []);
  await note(kv, "a");
  await note(kv, "b");
  await kv.delete(NOTES.latest);
  assert.equal((await note(kv, "c")).id, 3);
  kv.close();
});

Deno.test("claim: a form state's id applies once, across handles on one file", async () => {
  await using store = await tempStore();
  const path = store.path;
  const handles = await Promise.all([1, 2, 3, 4].map(() => Deno.openKv(path)));
  const claims = handles.map(claimInKv);
  const expires = Date.now() + 60_000;
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => claims[i % 4]("form-1", expires)),
  );
  assert.equal(results.filter(Boolean).length, 1, JSON.stringify(results));
  assert.equal(await claims[0]("form-2", expires), true);
  assert.equal(await claims[3]("form-2", expires), false);
  handles.forEach((kv) => kv.close());
});

Deno.test("deno task kv:dump prints the store's entries under a prefix, one JSON line each", async () => {
  await using store = await tempStore();
  const path = store.path;
  const kv = await Deno.openKv(path);
  await note(kv, "dumped", new Date(0));
  await kv.set(["other", 1n], new Uint8Array([1, 2]));
  kv.close();
  const dump = async (...prefix: string[]) => {
    const { success, stdout } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "lib/cli/kv_dump.ts", ...prefix],
      cwd: PROJECT_ROOT,
      env: { KV_PATH: path },
    }).output();
    assert.ok(success);
    return new TextDecoder().decode(stdout).trim().split("\n").map((line) => JSON.parse(line));
  };
  const notes = await dump("notes", "items");
  assert.deepEqual(notes.map(({ key, value }) => ({ key, value })), [
    {
      key: ["notes", "items", 1],
      value: { id: 1, text: "dumped", at: "1970-01-01T00:00:00.000Z" },
    },
  ]);
  assert.match(notes[0].versionstamp, /^[0-9a-f]{20}$/);
  const all = await dump();
  assert.deepEqual(all.map(({ key }) => key), [
    ["_store", "opened"],
    ["notes", "items", 1],
    ["notes", "latest"],
    ["other", { $bigint: "1" }],
  ]);
  assert.deepEqual(all[3].value, { $bytes: "AQI=" });
});
