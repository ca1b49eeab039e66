/**
 * @module
 * Issue 22, finding 8: `deno task dev`'s stack mapping (`POST /_dev/stack`) is the client's input.
 * It takes posts from the dev server's own pages only (a page elsewhere can post `text/plain`
 * without asking), at most 64 KiB of them, and reads them in linear time: the patterns before
 * were quadratic (240 KB blocked the dev server for ten seconds). The frames found are the same as
 * before. And the dev server listens on loopback unless `HOSTNAME` says otherwise.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { readSettings } from "../lib/cli/settings.ts";
import type { Backends } from "../lib/dev/backend.ts";
import type { DevEvents } from "../lib/dev/events.ts";
import { devFront } from "../lib/dev/front.ts";
import { replaceFrames } from "../lib/dev/stack.ts";

const ORIGIN = "http://localhost:8000";
const INFO = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo;

/** The dev server's front with a stack mapper that marks what it got; nothing else is reached. */
const front = devFront({
  session: "s",
  token: "t",
  events: {} as DevEvents,
  backends: {} as Backends,
  asset: () => Promise.resolve(undefined),
  mapStack: (stack) => `mapped:${stack}`,
  stale: () => false,
  styleSwaps: () => 0,
});

const postStack = (body: string, headers: Record<string, string>) =>
  front(
    new Request(`${ORIGIN}/_dev/stack`, {
      method: "POST",
      body,
      headers: { "Content-Type": "text/plain;charset=UTF-8", ...headers },
    }),
    INFO,
  );

Deno.test("dev: stacks are mapped for the dev server's own pages only", async () => {
  const ours = await postStack("Error: x", { Origin: ORIGIN });
  assert.deepEqual([ours.status, await ours.text()], [200, "mapped:Error: x"]);
  const others: Record<string, string>[] = [
    { Origin: "http://evil.example" },
    { Origin: "null" },
    {},
  ];
  for (const headers of others) {
    const res = await postStack("Error: x", headers);
    assert.equal(res.status, 403, JSON.stringify(headers));
    await res.body?.cancel();
  }
});

Deno.test("dev: a stack is at most 64 KiB", async () => {
  const within = await postStack("x".repeat(64 * 1024), { Origin: ORIGIN });
  assert.equal(within.status, 200);
  await within.body?.cancel();
  const over = await postStack("x".repeat(64 * 1024 + 1), { Origin: ORIGIN });
  assert.equal(over.status, 413);
  await over.body?.cancel();
});

Deno.test("dev: hostile stacks are read in linear time", async () => {
  const worker = new Worker(new URL("./helpers/hostile_stacks.ts", import.meta.url), {
    type: "module",
  });
  try {
    // "Did not hang": milliseconds here; minutes for the quadratic patterns before.
    const done = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve("still reading after 20 s"), 20_000);
      worker.onmessage = (event) => {
        clearTimeout(timer);
        resolve(event.data);
      };
      worker.postMessage("go");
    });
    assert.equal(done, "done");
  } finally {
    worker.terminate();
  }
});

/** The pattern the frames were found with before: the meaning `replaceFrames` keeps. */
const BEFORE = /(?:https?:\/\/[^/\s)]+)?(\/_app\/[^\s):?#]+)(?:\?[^\s):]*)?:(\d+):(\d+)/g;

Deno.test("dev: frames are found as before, host and query included", () => {
  const mark = (_: string, path: string, line: string | number, column: string | number) =>
    `<${path}|${line}|${column}>`;
  // Found by the property below: an empty path's "?" starts no query.
  assert.equal(replaceFrames("/_app/?/_app/(:2:2", mark), "/_app/?</_app/(|2|2>");
  assert.equal(
    replaceFrames(
      "Error: x\n    at f (http://localhost:8000/_app/Counter-X.js?v=2:56:9)\n" +
        "g@https://h:1/_app/chunk-Y.js:3:4\n    at /_app/a.js:1:2 )",
      mark,
    ),
    "Error: x\n    at f (</_app/Counter-X.js|56|9>)\ng@</_app/chunk-Y.js|3|4>\n    at </_app/a.js|1|2> )",
  );
  const pieces = [
    "http://",
    "https://",
    "/_app/",
    "h",
    "a.js",
    ":1",
    ":2",
    "?",
    "#",
    "/",
    ")",
    "(",
    " ",
    "\n",
    "x",
  ];
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 24 }), (parts) => {
      const text = parts.join("");
      assert.equal(replaceFrames(text, mark), text.replace(BEFORE, mark));
    }),
    { numRuns: 20_000 },
  );
});

Deno.test("dev: the dev server listens on loopback unless HOSTNAME says otherwise", () => {
  const hostname = (env: Record<string, string>) => readSettings((name) => env[name]).hostname;
  assert.equal(hostname({ NODE_ENV: "development" }), "127.0.0.1");
  assert.equal(hostname({ NODE_ENV: "development", HOSTNAME: "0.0.0.0" }), "0.0.0.0");
  assert.equal(hostname({}), "0.0.0.0", "production: every interface, as before");
});
