/**
 * @module
 * `<Contained>` on the server, in-process: on a page it sends its children's HTML as ever, in an
 * `<app-contained>` element with the fallback aside in a `<template>` (inert until the browser
 * runtime swaps it in); inside an island it is an error boundary that renders its children and
 * nothing else, so the island's HTML is what the browser hydrates. (In the browser:
 * e2e/contained_test.ts.)
 */
import assert from "node:assert/strict";
import { Contained } from "../lib/runtime.ts";
import { memoryApp } from "./helpers/app.ts";

function Widget() {
  return (
    <div>
      <Contained fallback={<em>inner fallback</em>}>
        <b>widget</b>
      </Contained>
    </div>
  );
}

Deno.test("<Contained>: a marker and its fallback on a page, a boundary inside an island", async () => {
  const app = memoryApp({
    routes: {
      "index.tsx": {
        default: () => (
          <Contained fallback={<p role="status">Could not start</p>}>
            <Widget />
          </Contained>
        ),
      },
    },
    islands: { Widget },
  });
  const html = (await (await app.request("/")).text()).replaceAll("<!-- -->", "");
  const part = html.match(/<app-contained style="display:contents">(.*)<\/app-contained>/)?.[1];
  assert.ok(part, html);
  assert.ok(
    part.endsWith('<template data-fallback=""><p role="status">Could not start</p></template>'),
  );
  // Inside the island: its own HTML only, as it hydrates.
  const island = part.match(/<app-island [^>]*>(.*)<\/app-island>/)?.[1];
  assert.equal(island, "<div><b>widget</b></div>");
});
