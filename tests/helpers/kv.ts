/**
 * @module
 * KV for tests: a file in a fresh temp folder (never the project's `.data/`), and SQLite's write
 * lock held by another process (`sqlite3`), the way a backup tool would hold it. `sqlite3` is one
 * of the tools `deno task test` makes sure of (`tests/setup.ts`).
 */
import { join } from "node:path";
import { tempDir } from "./temp_dir.ts";

/** A KV file's place in a folder of its own, which its disposal removes. */
export interface TempStore extends AsyncDisposable {
  /** The KV file's path (not yet made: `Deno.openKv` makes it). */
  path: string;
  /** Its folder. */
  dir: string;
}

/**
 * A KV file in a temp folder of its own: `await using store = await tempStore()`. Its disposal
 * removes the folder, and with it what SQLite keeps beside the file (`-shm`, `-wal`), which
 * removing the file alone leaves in /tmp run after run.
 */
export async function tempStore(name = "kv.sqlite3"): Promise<TempStore> {
  const dir = await tempDir("kv-test-");
  return {
    path: join(dir.path, name),
    dir: dir.path,
    [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose](),
  };
}

/** Holds SQLite's write lock on `path` from a `sqlite3` process until `release()`. */
export async function holdWriteLock(path: string): Promise<{ release(): Promise<void> }> {
  const child = new Deno.Command("sqlite3", {
    args: [path],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const stdin = child.stdin.getWriter();
  const encoder = new TextEncoder();
  await stdin.write(encoder.encode(
    ".timeout 20000\nBEGIN IMMEDIATE;\nUPDATE kv SET v = v WHERE k = x'00';\nSELECT 'LOCKED';\n",
  ));
  const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("LOCKED")) {
    const read = await out.read();
    if (read.done) throw new Error("sqlite3 ended before taking the lock");
    text += read.value;
  }
  return {
    async release() {
      await stdin.write(encoder.encode("ROLLBACK;\n"));
      await stdin.close();
      await out.cancel();
      await child.status;
    },
  };
}

/** Two handles on one SQLite file, as two workers of `deno serve --parallel` hold them. */
export async function twoWorkers(run: (one: Deno.Kv, other: Deno.Kv) => Promise<void>) {
  await using store = await tempStore();
  using one = await Deno.openKv(store.path);
  using other = await Deno.openKv(store.path);
  await run(one, other);
}
