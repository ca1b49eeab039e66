/**
 * @module
 * The test kit's `startServer` (`shell/testing`): `deno task start` and `deno serve --parallel`
 * started on port 0 and a KV file of their own, their address read back; a stop ends the whole
 * process group, also after the first process was killed with SIGKILL (what `deno task` had
 * started is left then); a server that exits at start is an error quoting its stderr.
 */
import assert from "node:assert/strict";
import { startServer } from "shell/testing";
import { builtFixture } from "../helpers/built_copy.ts";
import { groupMembers } from "../helpers/process_group.ts";
import { tempDir } from "../helpers/temp_dir.ts";
import { within } from "../helpers/wait.ts";

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("deno task start: served on a port of its own and a KV file of its own; a stop after a SIGKILL ends the rest of its group", async () => {
  const server = await startServer({ root: await builtFixture() });
  try {
    assert.match(server.origin, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.doesNotMatch(server.origin, /:0$/);
    const res = await fetch(`${server.origin}/`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.ok(await exists(server.kvPath), `the store ${server.kvPath} is a file`);

    // `deno task` runs the server as a child process: killing the first leaves that child.
    Deno.kill(server.pid, "SIGKILL");
    const left = await groupMembers(server.pid);
    assert.ok(left.length > 0, "the task's child outlives it");
  } finally {
    // Bounded: a stop that signalled only the first process would wait for the pipes forever.
    await within(server.stop(), 20_000, "the stop");
  }
  assert.deepEqual(await groupMembers(server.pid), []);
  assert.equal(await exists(server.kvPath), false, "its store is removed");
});

Deno.test("deno serve --parallel: two workers, their log lines, nothing left after a stop", async () => {
  let pid: number;
  {
    await using server = await startServer({
      root: await builtFixture(),
      parallel: 2,
      env: { LOG_REQUESTS: "1" },
    });
    pid = server.pid;
    assert.ok(server.stderr.some((line) => /Listening on .* with 2 threads/.test(line)));
    const res = await fetch(`${server.origin}/`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const line = await server.waitForLog((line) => /^GET \/ 200/.test(String(line.msg)));
    assert.equal(line.level, "info");
    assert.ok(server.stdout.some((printed) => printed.startsWith("[serve-worker-")));
    Deno.kill(pid, "SIGKILL");
  }
  assert.deepEqual(await groupMembers(pid), []);
});

Deno.test("a server that exits at start: the error quotes its stderr", async () => {
  await assert.rejects(
    startServer({ root: await builtFixture(), env: { REQUEST_TIMEOUT_MS: "soon" } }),
    (error: Error) => {
      assert.match(error.message, /exited with code 1 before listening/);
      assert.match(error.message, /stderr:\n[^]*REQUEST_TIMEOUT_MS/);
      return true;
    },
  );
});

Deno.test("a root that is not there: the start rejects and leaves no store behind", async () => {
  // The server's own store is made in the temp folder before the spawn, which throws at once for a
  // missing folder: it was left behind (review34). Its own TMPDIR, so no other test's store counts.
  await using tmp = await tempDir("start-server-tmp-");
  const before = Deno.env.get("TMPDIR");
  Deno.env.set("TMPDIR", tmp.path);
  try {
    await assert.rejects(
      startServer({ root: `${tmp.path}/no-such-project` }),
      Deno.errors.NotFound,
    );
  } finally {
    if (before === undefined) Deno.env.delete("TMPDIR");
    else Deno.env.set("TMPDIR", before);
  }
  assert.deepEqual(await Array.fromAsync(Deno.readDir(tmp.path)), []);
});

Deno.test("settings that name the server's own origin: APP_ORIGIN is where it listens, and other hosts get 400", async () => {
  const given: string[] = [];
  await using server = await startServer({
    root: await builtFixture(),
    parallel: 2,
    env: (origin) => {
      given.push(origin);
      return { APP_ORIGIN: origin };
    },
  });
  assert.deepEqual(given, [server.origin]);
  const home = await fetch(`${server.origin}/`);
  assert.equal(home.status, 200);
  await home.body?.cancel();
  // fetch sends its own Host: the other host goes over a connection of the test's.
  const port = Number(new URL(server.origin).port);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(
    new TextEncoder().encode("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
  );
  const answer = await new Response(conn.readable).text();
  assert.match(answer, /^HTTP\/1\.1 400 [^]*unknown host/);
});
