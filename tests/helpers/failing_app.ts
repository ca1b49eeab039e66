/**
 * @module
 * A throwaway copy of the project with the ways a page can fail that a browser must see: islands
 * that break while loading, rendering or hydrating, one whose chunk goes missing, and pages that
 * fail after their shell, so the browser tests run the real server against real broken routes and
 * islands without adding any to the app. (The server's side of failures is tested in-process:
 * failures_test.tsx.) Every thrown message holds `SECRET`, which no production response may ever
 * contain. `buildWithoutChunk` builds it short of one island's chunk.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { copyProject, type ProjectCopy } from "./project_copy.ts";

export const SECRET = "s3cret-f41lure";
const LATER = new URL("./later.tsx", import.meta.url);

const FILES: Record<string, string> = {
  "routes/fail/page.tsx": `
    export default function Page() {
      throw new TypeError("page: ${SECRET}");
    }`,
  // Failures inside a Suspense boundary, after the shell went out.
  "routes/fail/stream.tsx": `
    import { Suspense } from "react";
    import { Later } from "../../tests/helpers/later.tsx";
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
    import { Later } from "../../tests/helpers/later.tsx";
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
  // At the same path in the copy, so that its import of the copy's `lib/` resolves as here.
  await copy.write("tests/helpers/later.tsx", await Deno.readTextFile(LATER));
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
