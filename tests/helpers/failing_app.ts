/**
 * @module
 * A throwaway copy of the project with every way a page can fail, on the server and in the
 * browser, so the failure tests run the real server against real broken routes and islands
 * without adding any to the app. Every thrown message holds `SECRET`, which no production
 * response may ever contain. `buildWithoutChunk` builds it short of one island's chunk.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { copyProject, type ProjectCopy } from "./project_copy.ts";

export const SECRET = "s3cret-f41lure";

const FILES: Record<string, string> = {
  // Server failures before the shell: each answers 500 with the screen.
  "routes/fail/handler.ts": `
    export const handler = {
      GET() { throw new Error("handler: ${SECRET}"); },
    };`,
  "routes/fail/rejected.ts": `
    export const handler = {
      GET: () => Promise.reject(new Error("rejected: ${SECRET}")),
    };`,
  "routes/fail/string.ts": `
    export const handler = {
      GET() { throw "string: ${SECRET}"; },
    };`,
  "routes/fail/object.ts": `
    export const handler = {
      GET() { throw { reason: "object: ${SECRET}" }; },
    };`,
  "routes/fail/long.ts": `
    export const handler = {
      GET() { throw new Error("long: " + "x".repeat(5_000) + " ${SECRET}"); },
    };`,
  // A promise nobody awaits: the response is fine, the rejection must not end the process.
  "routes/fail/unhandled.ts": `
    export const handler = {
      GET() {
        Promise.reject(new Error("unhandled: ${SECRET}"));
        return new Response("answered");
      },
    };`,
  "routes/fail/page.tsx": `
    export default function Page() {
      throw new TypeError("page: ${SECRET}");
    }`,
  "routes/fail/page-rejected.tsx": `
    import { use } from "react";
    export default function Page() {
      return <p>{use(Promise.reject(new Error("page rejected: ${SECRET}")))}</p>;
    }`,
  // A Suspense boundary that fails at once, before the shell is ready: still a 500.
  "routes/fail/boundary.tsx": `
    import { Suspense } from "react";
    function Broken(): never {
      throw new Error("boundary: ${SECRET}");
    }
    export default function Page() {
      return <Suspense fallback={<p>Loading…</p>}><Broken /></Suspense>;
    }`,
  "routes/fail/boundary-missing.tsx": `
    import { Suspense } from "react";
    import { notFound } from "../../lib/mod.ts";
    function Missing(): never {
      throw notFound();
    }
    export default function Page() {
      return <Suspense fallback={<p>Loading…</p>}><Missing /></Suspense>;
    }`,
  "routes/fail/layout/_layout.tsx": `
    export default function Layout() {
      throw new Error("layout: ${SECRET}");
    }`,
  "routes/fail/layout/index.tsx": `
    export default function Page() {
      return <p>never shown</p>;
    }`,
  // Renders through a copy of _app that throws for this path only.
  "routes/fail/app.tsx": `
    export default function Page() {
      return <p>never shown</p>;
    }`,
  "routes/_app.tsx": `
    import type { AppProps } from "../lib/mod.ts";
    export default function App({ Component, url }: AppProps) {
      if (url.pathname === "/fail/app") throw new Error("app: ${SECRET}");
      return (
        <html lang="en">
          <head><meta charSet="utf-8" /></head>
          <body><Component /></body>
        </html>
      );
    }`,
  // A shell that takes its time: the client may leave first.
  "routes/fail/slow-shell.tsx": `
    import { Later } from "../../lib_test/later.tsx";
    export default function Page() {
      return <Later ms={3_000} />;
    }`,
  // Not-found: a handler's notFound(), and a _404 that throws for one path.
  "routes/fail/missing.ts": `
    import { notFound } from "../../lib/mod.ts";
    export const handler = {
      GET() { throw notFound(); },
    };`,
  "routes/_404.tsx": `
    import type { PageProps } from "../lib/mod.ts";
    export default function NotFound({ url }: PageProps) {
      if (url.pathname === "/fail/broken-404") throw new Error("404 page: ${SECRET}");
      return <><title>Page not found</title><h1>Page not found</h1></>;
    }`,
  // Failures inside a Suspense boundary, after the shell went out.
  "routes/fail/stream.tsx": `
    import { Suspense } from "react";
    import { Later } from "../../lib_test/later.tsx";
    export default function Page() {
      return (
        <>
          <h1>Before the failure</h1>
          <Suspense fallback={<p>Loading…</p>}><Later fail="stream: ${SECRET}" /></Suspense>
          <Suspense fallback={<p>Loading slowly…</p>}><Later ms={10_000} /></Suspense>
        </>
      );
    }`,
  "routes/fail/stream-island.tsx": `
    import { Suspense } from "react";
    import Clicker from "../../islands/Clicker.tsx";
    import { Later } from "../../lib_test/later.tsx";
    export default function Page() {
      return (
        <>
          <Clicker />
          <Suspense fallback={<p>Loading…</p>}>
            <Clicker />
            <Later fail="stream island: ${SECRET}" />
          </Suspense>
        </>
      );
    }`,
  "routes/fail/stream-missing.tsx": `
    import { Suspense } from "react";
    import { Later } from "../../lib_test/later.tsx";
    export default function Page() {
      return (
        <>
          <h1>Still here</h1>
          <Suspense fallback={<p>Loading…</p>}><Later notFound /></Suspense>
          <Suspense fallback={<p>Loading…</p>}><Later ms={50} /></Suspense>
        </>
      );
    }`,
  "lib_test/later.tsx": `
    import { use } from "react";
    import { notFound } from "../lib/mod.ts";
    const cache = new WeakMap<object, Promise<string>>();
    /** Suspends for \`ms\`, then shows "Arrived", fails with \`fail\` or throws notFound(). */
    // (React's dev build may call it without props to find its stack frame: hence the default.)
    export function Later(props: { ms?: number; fail?: string; notFound?: boolean } = {}) {
      let promise = cache.get(props);
      if (!promise) {
        promise = new Promise((resolve, reject) => setTimeout(() => {
          if (props.notFound) reject(notFound());
          else if (props.fail) reject(new Error(props.fail));
          else resolve("Arrived");
        }, props.ms ?? 100));
        cache.set(props, promise);
      }
      return <p>{use(promise)}</p>;
    }`,
  // Browser failures.
  "islands/Clicker.tsx": `
    import { useState } from "react";
    /** Fine to render; its button throws in the event handler. */
    export default function Clicker() {
      const [clicks, setClicks] = useState(0);
      return (
        <button type="button" onClick={() => {
          setClicks(clicks + 1);
          throw new Error("click handler failure");
        }}>Clicked {clicks}</button>
      );
    }`,
  "islands/BrowserOnlyBug.tsx": `
    /** Renders on the server, throws when React renders it in the browser. */
    export default function BrowserOnlyBug() {
      if (typeof document !== "undefined") throw new Error("island render failure");
      return <p>Rendered on the server</p>;
    }`,
  "islands/Mismatch.tsx": `
    /** Renders other text in the browser: React recovers by rendering it there. */
    export default function Mismatch() {
      return <p id="side">{typeof document === "undefined" ? "server" : "browser"}</p>;
    }`,
  "islands/Lost.tsx": `
    /** Fine; the test deletes its chunk from the build, as after a deploy. */
    export default function Lost() {
      return <p>Lost island</p>;
    }`,
  "routes/island/click.tsx": `
    import Clicker from "../../islands/Clicker.tsx";
    export default function Page() {
      return <><h1>Clicks</h1><Clicker /></>;
    }`,
  "routes/island/render.tsx": `
    import BrowserOnlyBug from "../../islands/BrowserOnlyBug.tsx";
    export default function Page() {
      return <><h1>Soon broken</h1><BrowserOnlyBug /></>;
    }`,
  "routes/island/mismatch.tsx": `
    import Mismatch from "../../islands/Mismatch.tsx";
    export default function Page() {
      return <><h1>Two truths</h1><Mismatch /></>;
    }`,
  "routes/island/lost.tsx": `
    import Lost from "../../islands/Lost.tsx";
    export default function Page() {
      return <><h1>Chunk gone</h1><Lost /></>;
    }`,
};

/** The copy with the failing routes and islands written in; not built yet. */
export async function failingProject(): Promise<ProjectCopy> {
  const copy = await copyProject();
  for (const [path, source] of Object.entries(FILES)) await copy.write(path, source);
  return copy;
}

/** Builds the copy, then deletes one island's chunk, as a deploy does to an open tab's assets. */
export async function buildWithoutChunk(root: string, island: string): Promise<void> {
  const build = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "lib/cli/build.ts"],
    cwd: root,
    env: { NODE_ENV: "production" },
  }).output();
  assert.ok(build.success, new TextDecoder().decode(build.stderr));
  const dir = join(root, "_build/static");
  const chunks = [...Deno.readDirSync(dir)].filter((e) => e.name.startsWith(`${island}-`));
  assert.ok(chunks.length > 0, `a chunk for ${island}`);
  for (const chunk of chunks) await Deno.remove(join(dir, chunk.name));
}
