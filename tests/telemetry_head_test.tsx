/**
 * @module
 * The telemetry's part of a page's head (Sentry's trace meta tags and the browser SDK's settings)
 * goes only on pages with islands, the only ones that run the SDK that reads it: asked once, and
 * written right before the island runtime's script - in `<head>` for an island of the shell, a
 * Suspense fallback's included (React drops a `<meta>` an island renders there: fix36); a page
 * without islands never asks for it (its string work and its garbage were paid on every such page,
 * for nothing: docs/performance.md, perf34). In-process; the same with Deno's OpenTelemetry and the real SDK in
 * `tests/process/telemetry_test.ts`, in the browser in `tests/e2e/sentry_test.ts`.
 */
import assert from "node:assert/strict";
import { type ReactNode, Suspense, use } from "react";
import type { Telemetry } from "../lib/server/telemetry.ts";
import { memoryApp } from "./helpers/app.ts";

const TAG = '<meta name="sentry-trace" content="trace-of-the-request"/>';
const TAG_BYTES = new TextEncoder().encode(TAG);

/** A telemetry that only puts a tag in the head, counting how often it is asked. */
function headSpy() {
  const asked = { count: 0 };
  const telemetry: Telemetry = {
    head() {
      asked.count++;
      return TAG_BYTES;
    },
    captureFailure: () => ({ trace_id: null, span_id: null, sentry_event_id: null }),
    flush: () => Promise.resolve(),
  };
  return { asked, telemetry };
}

function Clicker({ label }: { label: string }) {
  return <button type="button">{label}</button>;
}

function Spinner() {
  return <i>spinning</i>;
}

function Late({ ready }: { ready: Promise<string> }) {
  return <Clicker label={use(ready)} />;
}

function Slow({ ready, children }: { ready: Promise<string>; children: ReactNode }) {
  use(ready);
  return children;
}

const soon = () => new Promise<string>((done) => setTimeout(() => done("late"), 20));

const count = (html: string, part: string) => html.split(part).length - 1;

Deno.test("telemetry head: on a page with islands, once, in <head>; none without", async (t) => {
  const { asked, telemetry } = headSpy();
  const app = memoryApp({
    routes: {
      "plain.tsx": { default: () => <p>no JavaScript here</p> },
      "two.tsx": {
        default: () => (
          <>
            <Clicker label="one" />
            <Clicker label="two" />
          </>
        ),
      },
      "late.tsx": {
        default: () => (
          <Suspense fallback={<p>loading</p>}>
            <Late ready={new Promise((done) => setTimeout(() => done("late"), 20))} />
          </Suspense>
        ),
      },
      // The spinner, an island, is what the shell shows: the boundary's islands come later.
      "fallback.tsx": {
        default: () => (
          <Suspense fallback={<Spinner />}>
            <Late ready={soon()} />
          </Suspense>
        ),
      },
      // The only island of the page is a fallback, replaced by content without one.
      "only-fallback.tsx": {
        default: () => (
          <Suspense fallback={<Spinner />}>
            <Slow ready={soon()}>
              <p>no island in here</p>
            </Slow>
          </Suspense>
        ),
      },
      // The first island in a fallback of a boundary inside one streamed after the shell.
      "late-fallback.tsx": {
        default: () => (
          <Suspense fallback={<p>loading</p>}>
            <Slow ready={soon()}>
              <Suspense fallback={<Spinner />}>
                <Late ready={new Promise((done) => setTimeout(() => done("later"), 40))} />
              </Suspense>
            </Slow>
          </Suspense>
        ),
      },
    },
    islands: { Clicker, Spinner },
  }, { telemetry });

  await t.step("a page without islands: nothing asked, no tag", async () => {
    const html = await (await app.request("/plain")).text();
    assert.match(html, /no JavaScript here/);
    assert.equal(count(html, TAG), 0, html);
    assert.equal(asked.count, 0);
  });

  await t.step("two islands: asked once, one tag, in <head>", async () => {
    const html = await (await app.request("/two")).text();
    assert.equal(count(html, "<app-island "), 2);
    assert.equal(count(html, TAG), 1, html);
    assert.ok(html.indexOf(TAG) < html.indexOf("</head>"), html);
    assert.equal(asked.count, 1);
  });

  await t.step("an island streamed after the shell brings the tag with it", async () => {
    const html = await (await app.request("/late")).text();
    assert.equal(count(html, "<app-island "), 1);
    assert.equal(count(html, TAG), 1, html);
    assert.equal(asked.count, 2);
  });

  await t.step(
    "an island in the shell's fallback, the boundary's later: once, in <head>",
    async () => {
      const html = await (await app.request("/fallback")).text();
      assert.equal(count(html, "<app-island "), 2);
      assert.equal(count(html, TAG), 1, html);
      assert.ok(html.indexOf(TAG) < html.indexOf("</head>"), html);
      assert.equal(asked.count, 3);
    },
  );

  await t.step("the page's only island in a fallback: once, in <head>", async () => {
    const html = await (await app.request("/only-fallback")).text();
    assert.match(html, /no island in here/);
    assert.equal(count(html, "<app-island "), 1);
    assert.equal(count(html, TAG), 1, html);
    assert.ok(html.indexOf(TAG) < html.indexOf("</head>"), html);
    assert.equal(asked.count, 4);
  });

  await t.step(
    "the first island in a fallback streamed after the shell: once, before it",
    async () => {
      const html = await (await app.request("/late-fallback")).text();
      assert.equal(count(html, "<app-island "), 2);
      assert.equal(count(html, TAG), 1, html);
      assert.ok(html.indexOf(TAG) < html.indexOf("<app-island "), html);
      assert.equal(asked.count, 5);
    },
  );
});
