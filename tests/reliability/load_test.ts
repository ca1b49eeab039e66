/**
 * Load: `wrk` (Debian's) at 50 connections for 5 s (LOAD_SECONDS) across every route of the
 * framework's test app its home page links to and the static files, all answering 2xx and each asked many times over, while
 * fetch loops keep asking routes that must answer 404. No socket error, no unexpected status, and
 * the server still answers afterwards. Long runs are the bench's (`deno task bench`); a run as long
 * as you like: `LOAD_SECONDS=30`.
 */
import assert from "node:assert/strict";
import { examplePaths } from "../../bench/pages.ts";
import { rotatingScript, wrk } from "../../bench/wrk.ts";
import { startServer } from "../helpers/server.ts";

const SECONDS = Number(Deno.env.get("LOAD_SECONDS") ?? 5);
const MISSING_PATHS = ["/nope", "/blog/no-such-post", "/favicon.svg/more", "/_app/missing.js"];

Deno.test(`${SECONDS} s at 50 connections: no errors, no unexpected status`, async () => {
  await using server = await startServer();
  const okPaths = [...await examplePaths(server.origin), "/styles.css", "/favicon.svg"];
  assert.ok(okPaths.length > 5, `routes: ${okPaths}`);
  const script = await rotatingScript(okPaths);
  try {
    const until = performance.now() + SECONDS * 1000;
    const unexpected: string[] = [];
    let missingAsked = 0;
    const askMissing = async () => {
      while (performance.now() < until) {
        for (const path of MISSING_PATHS) {
          const res = await server.fetch(path);
          await res.body?.cancel();
          missingAsked++;
          if (res.status !== 404) unexpected.push(`${path} → ${res.status}`);
        }
      }
    };
    const [result] = await Promise.all([
      wrk(server.origin, { seconds: SECONDS, connections: 50, script }),
      askMissing(),
      askMissing(),
    ]);

    assert.equal(result.socketErrors, 0, "socket errors");
    assert.equal(result.non2xx3xx, 0, "non-2xx/3xx responses on routes that answer 200");
    // wrk takes the paths in turn: each route was asked this many times under load.
    const perPath = Math.floor(result.requests / okPaths.length);
    assert.ok(perPath >= 50, `${result.requests} requests over ${okPaths.length} paths`);
    assert.ok(missingAsked > 0, "404 routes were asked");
    assert.deepEqual(unexpected.slice(0, 5), [], "404 routes answered otherwise");

    const after = await server.fetch("/");
    assert.equal(after.status, 200);
    await after.body?.cancel();
    const errors = server.logs().filter((line) => line.level === "error");
    assert.deepEqual(errors.slice(0, 3), [], "server logged errors under load");
  } finally {
    await Deno.remove(script);
  }
});
