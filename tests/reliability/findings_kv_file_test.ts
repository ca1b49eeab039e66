/**
 * Issue 22, finding 12 (second half): the KV store's file deleted under a running server. SQLite
 * keeps writing to the file it opened, which nothing can open again: every write since was lost at
 * the next start, and nothing said so. Now the server fails loudly: one fatal JSON line naming the
 * store, and exit code 1 for a supervisor to see.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { builtTarget, startTarget } from "./target.ts";

const FILES = {
  "routes/findings/note.ts": `import { kvOf } from "shell/data";
    export const handler = {
      async POST(req: Request, ctx: Parameters<typeof kvOf>[0]) {
        await kvOf(ctx).set(["findings", "note"], await req.text());
        return new Response("saved");
      },
    };
  `,
  "routes/findings/pid.ts":
    `export const handler = { GET: () => new Response(String(Deno.pid)) };\n`,
};

/** "Did not hang": the store is looked at every second. */
const NOTICED_MS = 15_000;

Deno.test("finding 12: a KV store deleted under the server ends it loudly", async () => {
  const built = await builtTarget(FILES);
  const dir = await Deno.makeTempDir({ prefix: "findings-kv-" });
  const path = join(dir, "kv.sqlite3");
  const server = await startTarget({ KV_PATH: path }, { root: built.root });
  try {
    const pid = Number(await (await server.fetch("/findings/pid")).text());
    const saved = await server.fetch("/findings/note", { method: "POST", body: "before" });
    assert.equal(await saved.text(), "saved");

    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      await Deno.remove(file).catch(() => {});
    }
    const line = await server.waitForLog((line) => line.fatal === true, NOTICED_MS);
    assert.equal(line.level, "error");
    assert.match(String(line.msg), /KV store/);
    assert.ok(String(line.msg).includes(path), "the line names the file");
    // It exits by itself: no signal of ours.
    const giveUp = performance.now() + NOTICED_MS;
    while (await Deno.stat(`/proc/${pid}`).then(() => true, () => false)) {
      assert.ok(performance.now() < giveUp, "still running after its store was deleted");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await server.stop(), 1);
  } finally {
    await server[Symbol.asyncDispose]();
    await Deno.remove(dir, { recursive: true });
  }
});
