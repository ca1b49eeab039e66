/**
 * @module
 * `render/islands_head.ts`: the tags go in once, right before the island runtime's script, wherever
 * the stream's chunks cut that script's tag; nothing is searched or changed before an island
 * rendered. The pages themselves: `tests/telemetry_head_test.tsx`.
 */
import assert from "node:assert/strict";
import { IslandsHead } from "../lib/render/islands_head.ts";
import type { RenderContextValue } from "../lib/render/context.ts";

const RUNTIME = '<script src="/_app/boot.js" type="module" async=""></script>';
const PAGE = `<!DOCTYPE html><html><head><meta charSet="utf-8"/>${RUNTIME}</head><body>` +
  `<app-island name="A"></app-island>${RUNTIME}</body></html>`;
const TAGS = '<meta name="sentry-trace" content="t"/>';
const tags = () => new TextEncoder().encode(TAGS);

function context(islands: boolean): RenderContextValue {
  const assets = { boot: { entry: "/_app/boot.js", imports: [] }, islands: {} };
  return islands ? { nonce: "n", assets, islands } : { nonce: "n", assets };
}

/** `html` through a writer, cut at `cuts`; the tail, if any, given to `finish`. */
async function through(html: string, cuts: number[], ctx: RenderContextValue, tail?: string) {
  const head = new IslandsHead(tags, ctx);
  const bytes = new TextEncoder().encode(html);
  const starts = [0, ...cuts];
  const chunks = starts.map((start, i) => bytes.subarray(start, starts[i + 1] ?? bytes.length));
  const out = new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  }).pipeThrough(
    new TransformStream({
      transform: (chunk, c) => head.write(chunk, c),
      flush: (c) => head.finish(c, tail === undefined ? undefined : new TextEncoder().encode(tail)),
    }),
  );
  return await new Response(out).text();
}

Deno.test("islands head: once, before the runtime's script, wherever the chunks cut its tag", async () => {
  const expected = PAGE.replace(RUNTIME, TAGS + RUNTIME);
  for (let cut = 1; cut < PAGE.length; cut++) {
    assert.equal(await through(PAGE, [cut], context(true)), expected, `cut at ${cut}`);
  }
  assert.equal(await through(PAGE, [40, 50, 60, 70], context(true)), expected);
  // A page React finished with its shell, read whole.
  const head = new IslandsHead(tags, context(true));
  const page = new TextEncoder().encode(PAGE);
  assert.equal(new TextDecoder().decode(head.into(page)), expected);
});

Deno.test("islands head: nothing before an island rendered; a tail searched regardless", async () => {
  assert.equal(await through(PAGE, [50], context(false)), PAGE);
  const tail = `<div>${RUNTIME}<app-island name="B"></app-island></div>`;
  assert.equal(
    await through("<p>page</p>", [], context(false), tail),
    "<p>page</p>" + tail.replace(RUNTIME, TAGS + RUNTIME),
  );
});
