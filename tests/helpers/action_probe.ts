/**
 * @module
 * A throwaway copy of the project with a probe for server actions, for the browser: the actions
 * of `probe_actions.ts` (as `routes/_probe/actions.ts`), an island that calls them, and a page
 * with a server-rendered form. `SECRET` is in a failure's message, never in a response.
 */
import { copyProject, type ProjectCopy } from "./project_copy.ts";

export const SECRET = "s3cret-act10n-failure";
const ACTIONS = new URL("./probe_actions.ts", import.meta.url);

const FILES: Record<string, string> = {
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
};

export async function probeProject(): Promise<ProjectCopy> {
  const copy = await copyProject();
  await copy.write("routes/_probe/actions.ts", await Deno.readTextFile(ACTIONS));
  for (const [path, contents] of Object.entries(FILES)) await copy.write(path, contents);
  return copy;
}

/** The ids the copy's build gave its actions, by export name. */
export async function actionIds(copy: ProjectCopy): Promise<Record<string, string>> {
  const manifest = await Deno.readTextFile(`${copy.root}/_build/manifest.gen.ts`);
  const ids: Record<string, string> = {};
  for (const [, id, name] of manifest.matchAll(/\{ id: "([^"]+)", name: "([^"]+)"/g)) {
    ids[name] = id;
  }
  return ids;
}
