/**
 * @module
 * The browser tests' app for expected errors, contained parts and the failure screens' markup: a
 * copy of the project with routes and islands of the tests' own, built once and shared
 * (`built_copy.ts`). Under `/errors/`: a folder with its own `_error.tsx` whose middleware refuses
 * (a `refuse=1` cookie), a page that refuses, one whose Suspense boundary refuses after the shell,
 * an island and forms calling actions that refuse. Under `/contained/`: islands that break (while
 * rendering, their chunk lost, after a click) inside a `<Contained>` part, and one with a part of its
 * own. Under `/screens/`: a server failure and an island that takes its page down.
 */
import { join } from "node:path";
import { builtCopy } from "./built_copy.ts";

export const MEMBERS_ONLY = "Only members can see this board";
export const TAKEN = "A task named “Groceries” exists already";

const FILES: Record<string, string> = {
  "routes/errors/_error.tsx": `
    import type { ErrorPageProps } from "shell";
    export default function BoardError({ status, message }: ErrorPageProps) {
      return (
        <section className="board-error">
          <title>{message}</title>
          <h1>{message}</h1>
          <p>Error {status}. <a href="/">Back to the start</a></p>
        </section>
      );
    }`,
  "routes/errors/_middleware.ts": `
    import { httpError, type Middleware } from "shell";
    export const handler: Middleware = async function membersOnly(c, next) {
      if (c.req.header("cookie")?.includes("refuse=1")) throw httpError(403, ${
    JSON.stringify(MEMBERS_ONLY)
  });
      await next();
    };`,
  "routes/errors/_actions.ts": `"use server";
    import { httpError } from "shell";
    export async function archive(_form?: FormData): Promise<string> {
      throw httpError(409, ${JSON.stringify(TAKEN)});
    }
    export async function fine(_form?: FormData): Promise<string> {
      return "fine";
    }`,
  "routes/errors/private.tsx": `
    import { httpError } from "shell";
    export default function Private(): never {
      throw httpError(403, ${JSON.stringify(MEMBERS_ONLY)});
    }`,
  "routes/errors/late.tsx": `
    import { Suspense, use } from "react";
    import { httpError } from "shell";
    function Tasks({ tasks }: { tasks: Promise<string> }) {
      return <p>{use(tasks)}</p>;
    }
    export default function Late() {
      const tasks = new Promise<string>((_, reject) =>
        setTimeout(() => reject(httpError(409, ${JSON.stringify(TAKEN)})), 200)
      );
      return (
        <>
          <title>Tasks</title>
          <h1>Tasks</h1>
          <Suspense fallback={<p>Loading the tasks…</p>}><Tasks tasks={tasks} /></Suspense>
          <p>After the tasks</p>
        </>
      );
    }`,
  "islands/Archive.tsx": `
    import { useState } from "react";
    import { ActionError } from "shell/runtime";
    import { archive, fine } from "../routes/errors/_actions.ts";
    export default function Archive() {
      const [said, setSaid] = useState("");
      const run = (action: () => Promise<string>) => async () => {
        try {
          setSaid(await action());
        } catch (error) {
          if (!(error instanceof ActionError)) throw error;
          setSaid(error.status + " " + error.message + (error.digest ? " digest" : ""));
        }
      };
      return (
        <p>
          <button type="button" onClick={run(() => archive())}>Archive</button>
          <button type="button" onClick={run(() => fine())}>Fine</button>
          <output id="said">{said}</output>
        </p>
      );
    }`,
  "routes/errors/actions.tsx": `
    import Archive from "../../islands/Archive.tsx";
    import { archive, fine } from "./_actions.ts";
    export default function Actions() {
      return (
        <>
          <title>Actions</title>
          <h1>Actions</h1>
          <Archive />
          <form action={archive}><button type="submit">Archive without JavaScript</button></form>
          <form action={fine}><button type="submit">Fine without JavaScript</button></form>
        </>
      );
    }`,
  // Contained parts.
  "islands/Fragile.tsx": `
    /** Renders on the server, throws when React renders it in the browser. */
    export default function Fragile() {
      if (typeof document !== "undefined") throw new Error("fragile island failure");
      return <p>Fragile, rendered on the server</p>;
    }`,
  "islands/Gone.tsx": `
    /** Fine; its chunk is lost from the build, as after a deploy. */
    export default function Gone() {
      return <p>Gone island</p>;
    }`,
  "islands/Ticker.tsx": `
    import { useState } from "react";
    /** Renders fine until its button is clicked: then its render throws. */
    export default function Ticker() {
      const [ticks, setTicks] = useState(0);
      if (ticks > 0) throw new Error("ticker failure after a click");
      return <button type="button" onClick={() => setTicks(1)}>Tick</button>;
    }`,
  "islands/Sturdy.tsx": `
    import { useState } from "react";
    export default function Sturdy() {
      const [count, setCount] = useState(0);
      return <button type="button" onClick={() => setCount(count + 1)}>Sturdy {count}</button>;
    }`,
  "islands/Panel.tsx": `
    import { useState } from "react";
    import { Contained } from "shell/runtime";
    function Chart({ broken }: { broken: boolean }) {
      if (broken) throw new Error("chart failure");
      return <p>Chart drawn</p>;
    }
    /** A part of its own tree is contained: the chart breaks, the panel stays. */
    export default function Panel() {
      const [broken, setBroken] = useState(false);
      return (
        <section aria-label="Panel">
          <button type="button" onClick={() => setBroken(true)}>Break the chart</button>
          <Contained fallback={<p role="status">The chart is unavailable.</p>}>
            <Chart broken={broken} />
          </Contained>
          <p>Panel footer</p>
        </section>
      );
    }`,
  "routes/contained/[which].tsx": `
    import Fragile from "../../islands/Fragile.tsx";
    import Gone from "../../islands/Gone.tsx";
    import Panel from "../../islands/Panel.tsx";
    import Sturdy from "../../islands/Sturdy.tsx";
    import Ticker from "../../islands/Ticker.tsx";
    import { Contained } from "shell/runtime";
    import type { PageProps } from "shell";
    const PARTS = { render: Fragile, lost: Gone, click: Ticker, inside: Panel };
    export default function ContainedPage({ params }: PageProps) {
      const Part = PARTS[params.which as keyof typeof PARTS];
      return (
        <>
          <title>Contained</title>
          <h1>Contained</h1>
          <Contained fallback={<p role="status" id="fallback">This part could not start.</p>}>
            <Part />
          </Contained>
          <Sturdy />
        </>
      );
    }`,
  // The failure screens.
  "routes/screens/server.tsx": `
    export default function Server(): never {
      throw new Error("a server failure for the screen");
    }`,
  "routes/screens/client.tsx": `
    import Fragile from "../../islands/Fragile.tsx";
    export default function Client() {
      return <><title>Soon broken</title><h1>Soon broken</h1><Fragile /></>;
    }`,
};

/** The root of the built copy, made once per set of sources. */
export async function errorsProject(): Promise<string> {
  return await builtCopy("errors", FILES, { finish: loseChunk });
}

/** As a deploy does to an open tab's assets: the `Gone` island's chunk is gone. */
async function loseChunk(root: string): Promise<void> {
  const assets = join(root, "_build/static");
  let lost = 0;
  for await (const entry of Deno.readDir(assets)) {
    if (entry.name.startsWith("Gone-")) {
      await Deno.remove(join(assets, entry.name));
      lost++;
    }
  }
  if (lost === 0) throw new Error("the build wrote no chunk for the Gone island");
}
