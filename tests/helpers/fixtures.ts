/**
 * @module
 * The fixtures the browser tests need — islands and routes added to a copy of the framework's test
 * app (`tests/fixture/`), built once (a browser needs real chunks) and shared, read-only, by every
 * browser test of a run:
 * islands that break while loading (`Lost`, whose chunk the build loses), rendering or hydrating,
 * pages that fail after their shell, the action probe (`probe_actions.ts` as
 * `routes/_probe/actions.ts`, an island calling it, a page with its forms), an island whose
 * action's refusals `recover()` turns into state (`Limited`), an island showing the
 * props it got, and islands that fetch and throw for Sentry. Every failure's message holds
 * `FAILURE_SECRET` or `ACTION_SECRET`, which no production response may ever contain.
 *
 * The copy is built once per set of sources and shared (`built_copy.ts`). (The server's side of
 * all this is tested in-process, with modules in memory: failures_test.tsx, actions_http_test.ts.)
 */
import { join } from "node:path";
import { builtCopy } from "./built_copy.ts";

export const FAILURE_SECRET = "s3cret-f41lure";
export const ACTION_SECRET = "s3cret-act10n-failure";
const SECRET = FAILURE_SECRET;

/** Strings an island gets as props that must arrive intact and harmless. */
export const PROP_STRINGS = [
  "</script><script>window.__pwned = 1</script>",
  "<!--",
  `"'&<>`,
  "\u2028\u2029",
  "</app-island>",
];

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
  "islands/Probe.tsx": `
    import { useActionState, useState } from "react";
    import { echo, fail, remember, upload } from "../routes/_probe/actions.ts";

    export default function Probe() {
      const [echoed, setEchoed] = useState("");
      const [caught, setCaught] = useState("");
      const [state, rememberAction] = useActionState(remember, { said: null });
      const callEcho = async () => {
        const [when, map, big] = await echo(new Date(0), new Map([["a", 1]]), 2n ** 70n);
        const form = new FormData();
        form.set("file", new File(["hello"], "hello.txt", { type: "text/plain" }));
        const { name, text } = await upload(form);
        setEchoed([when.toISOString(), map.get("a"), big, name, text].join(" "));
      };
      const callFail = async () => {
        try {
          await fail();
        } catch (error) {
          setCaught(error.digest);
        }
      };
      return (
        <section>
          <button type="button" onClick={callEcho}>Echo</button>
          <output id="echoed">{echoed}</output>
          <button type="button" onClick={callFail}>Fail caught</button>
          <output id="caught">{caught}</output>
          <form action={rememberAction}>
            <input name="said" />
            <button type="submit">Remember</button>
            <output id="said">{state.said}</output>
          </form>
          <form action={fail}>
            <button type="submit">Fail uncaught</button>
          </form>
        </section>
      );
    }
  `,
  "routes/probe.tsx": `
    import Probe from "../islands/Probe.tsx";
    import { late, toAbout } from "./_probe/actions.ts";

    export default function ProbePage() {
      return (
        <>
          <title>Probe</title>
          <Probe />
          <form action={toAbout} id="to-about"><button type="submit">To about</button></form>
          <form action={late} id="late"><input name="note" /><button type="submit">Late</button></form>
        </>
      );
    }
  `,
  // recover(): an action behind a folder's rate limit (one call a minute per client), whose 429
  // becomes the form's state in the browser, while the form still posts to the action without
  // JavaScript.
  "routes/_limited/_middleware.ts": `import { rateLimit } from "shell/data";
export const handler = rateLimit({ name: "limited", limit: 1, windowMs: 60_000 });
`,
  "routes/_limited/actions.ts": `"use server";
export async function note(_previous: unknown, form: FormData) {
  return { said: String(form.get("said")), wait: false };
}
`,
  "islands/Limited.tsx": `import { useActionState } from "react";
import { actionStatus, recover } from "shell/runtime";
import { note } from "../routes/_limited/actions.ts";

const noteOrWait = recover(note, (error, _previous, form: FormData) =>
  actionStatus(error) === 429 ? { said: String(form.get("said")), wait: true } : undefined
);

export default function Limited() {
  const [state, action] = useActionState(noteOrWait, { said: "", wait: false });
  return (
    <form action={action}>
      <input name="said" defaultValue={state.said} />
      <button type="submit">Note</button>
      <output id="noted">{state.wait ? "Wait, please." : state.said}</output>
    </form>
  );
}
`,
  "routes/limited.tsx": `import Limited from "../islands/Limited.tsx";
export default function Page() {
  return <Limited />;
}
`,
  "islands/Props.tsx": `import { useEffect, useState } from "react";

/** Shows, once hydrated, what its props are in the browser. */
export default function Props(props: Record<string, any>) {
  const [report, setReport] = useState("");
  useEffect(() => {
    const { since, tags, scores, big, home, node, strings } = props;
    setReport(JSON.stringify({
      since: since instanceof Date && since.toISOString(),
      tags: tags instanceof Set && [...tags],
      scores: scores instanceof Map && [...scores].map(([k, v]) => [k, typeof v, String(v)]),
      big: typeof big === "bigint" && String(big),
      home: home instanceof URL && home.pathname,
      missing: "missing" in props && props.missing === undefined,
      cycle: node.self === node,
      strings,
    }));
  }, []);
  return <pre id="report">{report}</pre>;
}
`,
  "routes/props.tsx": `import Props from "../islands/Props.tsx";

const node: Record<string, unknown> = { name: "node" };
node.self = node;

export default function PropsPage() {
  return (
    <Props
      since={new Date("2026-01-01T00:00:00Z")}
      tags={new Set(["react", "deno"])}
      scores={new Map([["ada", 10n ** 20n]])}
      big={2n ** 64n}
      home={new URL("https://example.test/home")}
      missing={undefined}
      node={node}
      strings={${JSON.stringify(PROP_STRINGS)}}
    />
  );
}
`,
  "islands/Thrower.tsx": `import { useState } from "react";

export default function Thrower() {
  const [now, setNow] = useState("");
  const load = async () => setNow((await (await fetch("/api/time")).json()).now);
  return (
    <p>
      <button type="button" onClick={load}>Fetch</button>
      <button type="button" onClick={() => { throw new Error("island click failed"); }}>Throw</button>
      <output>{now}</output>
    </p>
  );
}
`,
  "islands/Broken.tsx": `export default function Broken() {
  if (typeof document !== "undefined") throw new Error("broken island");
  return <p>fine on the server</p>;
}
`,
  "routes/thrower.tsx": `import Thrower from "../islands/Thrower.tsx";
export default function Page() {
  return <Thrower />;
}
`,
  "routes/broken.tsx": `import Broken from "../islands/Broken.tsx";
export default function Page() {
  return <Broken />;
}
`,
};

/** Files copied in as they are, at the same place (their imports of `lib/` resolve alike). */
const COPIED: Record<string, URL> = {
  "tests/helpers/later.tsx": new URL("./later.tsx", import.meta.url),
  "routes/_probe/actions.ts": new URL("./probe_actions.ts", import.meta.url),
};

/** The root of the built fixture copy, made once per set of sources (`built_copy.ts`). */
export async function fixtureProject(): Promise<string> {
  const copied = await Promise.all(
    Object.entries(COPIED).map(async ([path, url]) => [path, await Deno.readTextFile(url)]),
  );
  return await builtCopy("fixtures", { ...FILES, ...Object.fromEntries(copied) }, {
    finish: loseChunk,
  });
}

/** As a deploy does to an open tab's assets: the `Lost` island's chunk is gone. */
async function loseChunk(root: string): Promise<void> {
  const assets = join(root, "_build/static");
  let lost = 0;
  for await (const entry of Deno.readDir(assets)) {
    if (entry.name.startsWith("Lost-")) {
      await Deno.remove(join(assets, entry.name));
      lost++;
    }
  }
  if (lost === 0) throw new Error("the fixtures' build wrote no chunk for the Lost island");
}

/** The ids the fixtures' build gave its actions, by export name. */
export async function actionIds(root: string): Promise<Record<string, string>> {
  const manifest = await Deno.readTextFile(join(root, "_build/manifest.gen.ts"));
  const ids: Record<string, string> = {};
  for (const [, id, name] of manifest.matchAll(/\{ id: "([^"]+)", name: "([^"]+)"/g)) {
    ids[name] = id;
  }
  return ids;
}
