/**
 * @module
 * Deploys never break an open tab, in Chromium, with real deploys: a copy of the test app with
 * pages, islands and actions of this test's own is built and served (`deno task start`'s server,
 * then `deno serve --parallel` with two workers), tabs are opened and typed into, then the sources
 * are edited — an action edited, another renamed away, the islands and a module they load later
 * edited — rebuilt in place (`deno task build`), the old build's files deleted from the disk, as a
 * Deno Deploy deployment holds only its own, and the server restarted on the same port and KV
 * store. Then the old tabs are used:
 * - an edited action: the old tab's call runs the new code (its id did not change);
 * - an edited island, a removed one: the old tab keeps working; what it loads after the deploy
 *   (the action client, the Sentry SDK, islands whose chunks come late, a module imported on a
 *   click) comes from KV, the old build's files being gone — never a 404;
 * - an island whose chunk is gone even from KV (past the retention): a 404, then a reload to the
 *   new version with what was typed back in its fields — not the failure screen;
 * - a removed action: no failure screen; the page reloads to the new version with what was typed
 *   back in its fields (never a password), and one sentence saying why;
 * - an edited action whose answer the old island cannot render (props that no longer fit): the
 *   page reloads to the new version, the broken island's fields kept, and another sentence (the
 *   action did run);
 * - the same without JavaScript: the edited action's form lands back with its result; the removed
 *   one's lands back on its page (303), what it sent in its fields, and the sentence.
 * - signing in and out (`shell/auth`): a sign-in form opened before the deploy signs in after it
 *   (the action was edited, its id is the same); a tab signed in before it stays signed in, and its
 *   sign-out, renamed by the deploy, gets the 410: the page reloads to the new version, still
 *   signed in, with the sentence, and the new sign-out works.
 *
 * `DEPLOYS_FRAMEWORK=/path/to/an/older/tree` runs the same against that tree's framework (`lib/`,
 * `deno.json`, `deno.lock`, `main.ts`), to show what the scenarios did before (see the report of
 * issue 28). Each runner takes two builds and two starts: some 40 s in all on a quiet machine.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { Page, Response, Route } from "playwright-core";
import { createUser } from "../../lib/auth.ts";
import { filesBelow } from "../../lib/build/files.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { startOtlpReceiver } from "../helpers/otlp_receiver.ts";
import { serveParallel } from "../helpers/parallel.ts";
import { copyProject, type ProjectCopy } from "../helpers/project_copy.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const OLD_FRAMEWORK = Deno.env.get("DEPLOYS_FRAMEWORK");
const NOTICE =
  "This page was updated while you had it open: check what you entered and send it again.";
/** Who signs in and out across the deploy. */
const USER = { email: "ada@example.com", password: "correct horse battery" };
/** When the old page broke on what the new server answered: the action may have run. */
const RELOADED =
  "This page was updated while you had it open: check that what you did last took effect.";

/** The first version: what the open tabs load. */
const V1: Record<string, string> = {
  "routes/_notes/actions.ts": `"use server";
export interface NoteState {
  said?: string;
}

export async function save(_previous: NoteState, form: FormData): Promise<NoteState> {
  return await Promise.resolve({ said: \`saved by v1: \${form.get("title")}\` });
}

export async function erase(_previous: NoteState, form: FormData): Promise<NoteState> {
  return await Promise.resolve({ said: \`erased by v1: \${form.get("body")}\` });
}

export interface StampState {
  label?: { text: string };
}

export async function stamp(_previous: StampState, _form: FormData): Promise<StampState> {
  return await Promise.resolve({ label: { text: "stamped by v1" } });
}
`,
  "islands/Notes.tsx": `import { useActionState, useState } from "react";
import { erase, type NoteState, save, stamp, type StampState } from "../routes/_notes/actions.ts";

export default function Notes() {
  const [saved, saveAction] = useActionState(save, {} as NoteState);
  const [erased, eraseAction] = useActionState(erase, {} as NoteState);
  const [stamped, stampAction] = useActionState(stamp, {} as StampState);
  const [later, setLater] = useState("");
  return (
    <section>
      <p id="version">island v1</p>
      <form action={saveAction}>
        <input name="title" aria-label="Title" />
        <button type="submit">Save</button>
        <output id="saved">{saved.said}</output>
      </form>
      <form action={eraseAction}>
        <textarea name="body" aria-label="Body" />
        <input type="checkbox" name="pinned" value="yes" aria-label="Pinned" />
        <select name="size" aria-label="Size">
          <option value="s">Small</option>
          <option value="l">Large</option>
        </select>
        <input type="password" name="pin" aria-label="Passcode" />
        <button type="submit">Erase</button>
        <output id="erased">{erased.said}</output>
      </form>
      <form action={stampAction}>
        <input name="ink" aria-label="Ink" />
        <button type="submit">Stamp</button>
        <output id="stamped">{stamped.label?.text.toUpperCase()}</output>
      </form>
      <button type="button" onClick={async () => setLater((await import("../components/later.ts")).later())}>
        Later
      </button>
      <output id="later">{later}</output>
    </section>
  );
}
`,
  "islands/Tally.tsx": `import { useState } from "react";

export default function Tally() {
  const [count, setCount] = useState(0);
  return <button type="button" id="tally" onClick={() => setCount(count + 1)}>Tally v1: {count}</button>;
}
`,
  "islands/Gone.tsx": `import { useState } from "react";

export default function Gone() {
  const [on, setOn] = useState(false);
  return <button type="button" id="gone" onClick={() => setOn(!on)}>Gone v1: {on ? "on" : "off"}</button>;
}
`,
  "routes/_auth/actions.ts": `"use server";
import { redirect, requestContext } from "shell";
import { signIn, signOut } from "shell/auth";

export interface LogInState {
  error?: string;
}

export async function logIn(_previous: LogInState, form: FormData): Promise<LogInState> {
  const fields = { email: form.get("email"), password: form.get("password") };
  const result = await signIn(requestContext(), fields);
  if (!result.ok) return { error: "refused by v1" };
  redirect("/me");
}

export async function logOut(): Promise<void> {
  await signOut(requestContext());
  redirect("/login");
}
`,
  "islands/LogIn.tsx": `import { useActionState } from "react";
import { logIn, type LogInState } from "../routes/_auth/actions.ts";

export default function LogIn() {
  const [state, action] = useActionState(logIn, {} as LogInState);
  return (
    <form action={action}>
      <input name="email" type="email" aria-label="Email" />
      <input name="password" type="password" aria-label="Password" />
      <button type="submit">Log in</button>
      <output id="refused">{state.error}</output>
    </form>
  );
}
`,
  "islands/LogOut.tsx": `import { logOut } from "../routes/_auth/actions.ts";

export default function LogOut() {
  return (
    <form action={logOut}>
      <input name="note" aria-label="Note" />
      <button type="submit">Log out</button>
    </form>
  );
}
`,
  "routes/login.tsx": `import LogIn from "../islands/LogIn.tsx";

export default function LogInPage() {
  return (
    <>
      <title>Log in</title>
      <LogIn />
    </>
  );
}
`,
  "routes/me/_middleware.ts": `import { requireUser } from "shell/auth";

export const handler = requireUser();
`,
  "routes/me/index.tsx": `import { createDefine } from "shell";
import type { UserState } from "shell/auth";
import LogOut from "../../islands/LogOut.tsx";

export default createDefine<UserState>().page(({ state }) => (
  <>
    <title>Me</title>
    <p id="who">Signed in as {state.user?.email}, page v1</p>
    <LogOut />
  </>
));
`,
  "components/later.ts": `export function later(): string {
  return "later v1";
}
`,
  "routes/notes.tsx": `import Notes from "../islands/Notes.tsx";
import Tally from "../islands/Tally.tsx";
import Gone from "../islands/Gone.tsx";

export default function NotesPage() {
  return (
    <>
      <title>Notes</title>
      <h1>Notes</h1>
      <Notes />
      <Tally />
      <Gone />
    </>
  );
}
`,
};

/**
 * The deploy: `save` edited, `erase` renamed away (to `wipe`), `stamp`'s answer of another shape,
 * the islands and `later` edited, the island `Gone` removed (`null`: the file is deleted); the
 * sign-in actions edited, `logOut` renamed away (to `leave`).
 */
function v2(): Record<string, string | null> {
  const edit = (path: string, ...pairs: [string, string][]) => {
    let text = V1[path];
    for (const [from, to] of pairs) {
      assert.ok(text.includes(from), `${path} holds ${from}`);
      text = text.replaceAll(from, to);
    }
    return text;
  };
  return {
    "routes/_notes/actions.ts": edit(
      "routes/_notes/actions.ts",
      ["saved by v1", "saved by v2"],
      ["erase(", "wipe("],
      ["erased by v1", "wiped by v2"],
      ["label?: { text: string }", "label?: string"],
      [`{ label: { text: "stamped by v1" } }`, `{ label: "stamped by v2" }`],
    ),
    "islands/Notes.tsx": edit(
      "islands/Notes.tsx",
      ["island v1", "island v2"],
      ["{ erase,", "{ wipe as erase,"],
      ["{stamped.label?.text.toUpperCase()}", "{stamped.label}"],
    ),
    "islands/Gone.tsx": null,
    "routes/_auth/actions.ts": edit(
      "routes/_auth/actions.ts",
      ["refused by v1", "refused by v2"],
      ["function logOut(", "function leave("],
    ),
    "islands/LogOut.tsx": edit("islands/LogOut.tsx", ["{ logOut }", "{ leave as logOut }"]),
    "routes/me/index.tsx": edit("routes/me/index.tsx", ["page v1", "page v2"]),
    "routes/notes.tsx": edit(
      "routes/notes.tsx",
      [`import Gone from "../islands/Gone.tsx";\n`, ""],
      ["      <Gone />\n", ""],
    ),
    "islands/Tally.tsx": edit("islands/Tally.tsx", ["Tally v1", "Tally v2"]),
    "components/later.ts": edit("components/later.ts", ["later v1", "later v2"]),
  };
}

type Serve = (root: string, env: Record<string, string>, port?: number) => Promise<TestServer>;

const runners: [string, Serve][] = [
  // What `deno task start` runs: the launcher, which runs the server as its child with Sentry on.
  [
    "deno task start",
    (root, env, port) => startServer(env, { root, port, script: "lib/cli/launch.ts" }),
  ],
  ["deno serve --parallel", (root, env, port) => serveParallel(root, env, port)],
];

for (const [runner, serve] of runners) {
  Deno.test(`deploys never break an open tab: ${runner}`, async (t) => {
    await using copy = await deployable();
    // Sentry on, so that its SDK is a chunk pages load late: one receiver stands in for its
    // envelope and OTLP endpoints (the launcher exports spans there).
    await using sentry = startOtlpReceiver();
    const env = {
      KV_PATH: join(copy.root, ".data/kv.sqlite3"),
      SENTRY_DSN: `http://publickey@127.0.0.1:${sentry.port}/42`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    };
    await using browser = await launchBrowser();

    let server = await serve(copy.root, env);
    await keptInKv(server);
    const port = server.port;
    const url = (path: string) => server.origin + path;

    // What the old tabs ask for once the deploy is done: held until then.
    let deployed!: () => void;
    const afterDeploy = new Promise<void>((resolve) => deployed = resolve);
    const holdUntilDeployed = async (route: Route) => {
      await afterDeploy;
      await route.continue();
    };

    // Old tabs, one per scenario, opened and typed into before the deploy. With scripts on: one
    // whose action client, Sentry SDK and the Tally and Gone islands' chunks come only after the
    // deploy; one to save; one to erase; one to stamp. With scripts off: one to save, one to erase.
    const scripted = await browser.newContext();
    const open = async (hold = false) => {
      const page = await scripted.newPage();
      const assets = watchAssets(page);
      if (hold) {
        await page.route(/\/_app\/(action-client|sentry|Tally|Gone)-\w+\.js$/, holdUntilDeployed);
      }
      await page.goto(url("/notes"));
      await hydratedIsland(page, "Notes");
      return { page, assets, noReload: await mark(page) };
    };
    const late = await open(true);
    // One more, in a browser context of its own (no cache shared with the others), whose Tally
    // chunk comes only once it is gone from KV too, as past the retention.
    let expired!: () => void;
    const afterExpiry = new Promise<void>((resolve) => expired = resolve);
    const lost = await browser.newContext();
    const gonePage = await lost.newPage();
    await gonePage.route(/\/_app\/Tally-\w+\.js$/, async (route) => {
      await afterExpiry;
      await route.continue();
    });
    await gonePage.goto(url("/notes"));
    await hydratedIsland(gonePage, "Notes");
    await gonePage.getByLabel("Title").fill("Typed before");
    const goneNoReload = await mark(gonePage);
    const saving = await open();
    await saving.page.getByLabel("Title").fill("Milk");
    const erasing = await open();
    await erasing.page.getByLabel("Title").fill("Eggs");
    await erasing.page.getByLabel("Body").fill("Dear diary");
    await erasing.page.getByLabel("Pinned").check();
    await erasing.page.getByLabel("Size").selectOption("l");
    await erasing.page.getByLabel("Passcode").fill("1234");
    const stamping = await open();
    await stamping.page.getByLabel("Title").fill("Jam");
    await stamping.page.getByLabel("Ink").fill("blue");
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const savePage = await plain.newPage();
    await savePage.goto(url("/notes"));
    await savePage.getByLabel("Title").fill("Bread");
    const erasePage = await plain.newPage();
    await erasePage.goto(url("/notes"));
    await erasePage.getByLabel("Body").fill("Dear diary, without scripts");
    await erasePage.getByLabel("Pinned").check();
    await erasePage.getByLabel("Size").selectOption("l");
    await erasePage.getByLabel("Passcode").fill("1234");
    // Signing in and out across the deploy, each tab with cookies of its own: one about to sign
    // in, one signed in already, about to sign out.
    {
      using kv = await Deno.openKv(env.KV_PATH);
      await createUser(kv, USER);
    }
    const signingIn = await (await browser.newContext()).newPage();
    await signingIn.goto(url("/login"));
    await hydratedIsland(signingIn, "LogIn");
    await signingIn.getByLabel("Email").fill(USER.email);
    await signingIn.getByLabel("Password").fill(USER.password);
    const signedIn = await (await browser.newContext()).newPage();
    await signedIn.goto(url("/login"));
    await hydratedIsland(signedIn, "LogIn");
    await signedIn.getByLabel("Email").fill(USER.email);
    await signedIn.getByLabel("Password").fill(USER.password);
    await signedIn.getByRole("button", { name: "Log in" }).click();
    await signedIn.locator("#who", { hasText: `Signed in as ${USER.email}, page v1` }).waitFor();
    await hydratedIsland(signedIn, "LogOut");
    await signedIn.getByLabel("Note").fill("See you");
    const signedInNoReload = await mark(signedIn);

    const oldFiles = await builtFiles(copy.root);
    let newFiles: string[] = [];
    const before = late.assets.loaded().length;
    await t.step("the deploy: edit, build beside the running server, restart", async () => {
      for (const [path, text] of Object.entries(v2())) {
        if (text === null) await Deno.remove(join(copy.root, path));
        else await copy.write(path, text);
      }
      await run(copy.root, ["task", "build"]);
      await server[Symbol.asyncDispose]();
      newFiles = await builtFiles(copy.root);
      // As on Deno Deploy, the new deployment holds only its own files.
      const gone = await deleteAllBut(copy.root, newFiles);
      assert.ok(gone.some((file) => /^Tally-\w+\.js$/.test(file)), "the old Tally chunk is gone");
      server = await serve(copy.root, env, port);
      await keptInKv(server);
      deployed();
    });
    const onlyOld = (path: string) => {
      const file = path.slice("/_app/".length);
      return oldFiles.includes(file) && !newFiles.includes(file);
    };

    await t.step(
      "an edited island, a removed one: the old tab works, what it loads late comes from KV",
      async () => {
        const { page, assets, noReload } = late;
        await hydratedIsland(page, "Tally");
        await page.locator("#tally").click();
        await page.locator("#tally", { hasText: "Tally v1: 1" }).waitFor();
        await hydratedIsland(page, "Gone");
        await page.locator("#gone").click();
        await page.locator("#gone", { hasText: "Gone v1: on" }).waitFor();
        await page.getByRole("button", { name: "Later" }).click();
        await page.locator("#later", { hasText: "later v1" }).waitFor();
        await page.locator("#version", { hasText: "island v1" }).waitFor();
        const loaded = assets.loaded().slice(before);
        // Held until the deploy: from the new server, 200 (the action client and the Sentry SDK
        // may be the same files in both builds, then on its disk).
        for (const kind of ["action-client", "sentry", "Tally", "Gone"]) {
          assert.ok(loaded.some((path) => path.startsWith(`/_app/${kind}-`)), `${kind}: ${loaded}`);
        }
        // The island's and the lazy module's chunks of the old build: gone from the disk, so from
        // KV.
        const fromKv = loaded.filter(onlyOld);
        assert.ok(fromKv.some((path) => /^\/_app\/Tally-\w+\.js$/.test(path)), `${fromKv}`);
        assert.ok(fromKv.some((path) => /^\/_app\/Gone-\w+\.js$/.test(path)), `${fromKv}`);
        assert.ok(
          !newFiles.some((file) => file.startsWith("Gone-")),
          "Gone is not in the new build",
        );
        assert.ok(fromKv.some((path) => /^\/_app\/chunk-\w+\.js$/.test(path)), `${fromKv}`);
        assert.deepEqual(assets.failed(), []);
        assert.equal(await page.locator("html[data-failure]").count(), 0);
        // And its action calls still run.
        await page.getByLabel("Title").fill("Late");
        await page.getByRole("button", { name: "Save" }).click();
        await page.locator("#saved", { hasText: "saved by v2: Late" }).waitFor();
        assert.ok(await noReload());
      },
    );

    await t.step(
      "an island whose script is gone even from KV: a reload, not the failure screen",
      async () => {
        const tally = oldFiles.find((file) => /^Tally-\w+\.js$/.test(file))!;
        {
          using kv = await Deno.openKv(env.KV_PATH);
          await kv.delete(["_assets", "file", `/_app/${tally}`]);
        }
        const [missing] = await Promise.all([
          gonePage.waitForResponse((res) => res.url().endsWith(tally)),
          expired(),
        ]);
        assert.equal(missing.status(), 404);
        await gonePage.locator("#version", { hasText: "island v2" }).waitFor();
        assert.ok(!(await goneNoReload()), "reloaded to the new version");
        await hydratedIsland(gonePage, "Tally");
        // Nothing to say (nothing the user asked for was lost): what was typed comes back once
        // the action client's bundle, which puts it back, has loaded.
        await gonePage.waitForFunction(() =>
          document.querySelector<HTMLInputElement>('input[name="title"]')?.value === "Typed before"
        );
        assert.equal(await gonePage.locator("html[data-failure]").count(), 0);
      },
    );

    await t.step("an edited action: the old tab's call runs the new code", async () => {
      const { page, assets, noReload } = saving;
      await page.getByRole("button", { name: "Save" }).click();
      await page.locator("#saved", { hasText: "saved by v2: Milk" }).waitFor();
      assert.ok(await noReload(), "no reload for an action that is still there");
      assert.equal(await page.locator("html[data-failure]").count(), 0);
      assert.deepEqual(assets.failed(), []);

      // Its answer named the new build: the old page, brought back from the browser's cache by
      // the back button, reloads to it rather than run old code.
      await page.goto(url("/about"));
      await page.goBack();
      await page.locator("#version", { hasText: "island v2" }).waitFor();
    });

    await t.step("a removed action: no failure screen; the new version, input kept", async () => {
      const { page, assets, noReload } = erasing;
      await page.getByRole("button", { name: "Erase" }).click();
      await page.locator("#version", { hasText: "island v2" }).waitFor();
      assert.ok(!(await noReload()), "reloaded to the new version");
      await hydratedIsland(page, "Notes");
      await page.getByRole("status").filter({ hasText: NOTICE }).waitFor();
      assert.equal(await page.getByLabel("Body").inputValue(), "Dear diary");
      assert.ok(await page.getByLabel("Pinned").isChecked());
      assert.equal(await page.getByLabel("Size").inputValue(), "l");
      assert.equal(await page.getByLabel("Passcode").inputValue(), "", "a password is never kept");
      // Typed into another form, never sent: kept all the same - by the tab (sessionStorage), put
      // back once the action client's bundle has loaded, which can be after the server's sentence
      // and its form's fields (from the cookie) already show: waited for, bounded.
      await page.waitForFunction(() =>
        document.querySelector<HTMLInputElement>('input[name="title"]')?.value === "Eggs"
      );
      assert.equal(await page.locator("html[data-failure]").count(), 0);
      assert.equal(await page.getByRole("status").filter({ hasText: NOTICE }).count(), 1);
      // The new version's action, sent again, runs.
      await page.getByRole("button", { name: "Erase" }).click();
      await page.locator("#erased", { hasText: "wiped by v2: Dear diary" }).waitFor();
      assert.deepEqual(assets.failed(), []);
    });

    await t.step(
      "an answer the old island cannot render: the new version, input kept, never the failure screen",
      async () => {
        const { page, assets, noReload } = stamping;
        await page.getByRole("button", { name: "Stamp" }).click();
        await page.locator("#version", { hasText: "island v2" }).waitFor();
        assert.ok(!(await noReload()), "reloaded to the new version");
        await hydratedIsland(page, "Notes");
        await page.getByRole("status").filter({ hasText: RELOADED }).waitFor();
        assert.equal(await page.getByLabel("Ink").inputValue(), "blue");
        assert.equal(await page.getByLabel("Title").inputValue(), "Jam");
        assert.equal(await page.locator("html[data-failure]").count(), 0);
        // One sentence, this one only.
        const notes = page.getByRole("status").filter({ hasText: "This page was updated" });
        assert.equal(await notes.count(), 1);
        // The new version's island shows the new answer.
        await page.getByRole("button", { name: "Stamp" }).click();
        await page.locator("#stamped", { hasText: "stamped by v2" }).waitFor();
        assert.deepEqual(assets.failed(), []);
      },
    );

    await t.step(
      "without JavaScript: the edited action works, the removed one lands back",
      async () => {
        await savePage.getByRole("button", { name: "Save" }).click();
        await savePage.locator("#saved", { hasText: "saved by v2: Bread" }).waitFor();
        assert.equal(savePage.url(), url("/notes"));

        const [posted] = await Promise.all([
          erasePage.waitForResponse((res) => res.url().includes("/_action/")),
          erasePage.getByRole("button", { name: "Erase" }).click(),
        ]);
        assert.equal(posted.status(), 303);
        await erasePage.waitForURL(url("/notes"));
        await erasePage.getByRole("status").filter({ hasText: NOTICE }).waitFor();
        assert.equal(
          await erasePage.getByLabel("Body").inputValue(),
          "Dear diary, without scripts",
        );
        assert.ok(await erasePage.getByLabel("Pinned").isChecked());
        assert.equal(await erasePage.getByLabel("Size").inputValue(), "l");
        assert.equal(await erasePage.getByLabel("Passcode").inputValue(), "");
        await erasePage.locator("#version", { hasText: "island v2" }).waitFor();
      },
    );

    await t.step(
      "signing in and out: the edited action signs in, the renamed one reloads, signed in still",
      async () => {
        await signingIn.getByRole("button", { name: "Log in" }).click();
        await signingIn.locator("#who", { hasText: `Signed in as ${USER.email}, page v2` })
          .waitFor();

        // The session began before the deploy; the call to the action the deploy renamed is
        // answered 410, and the page reloads to the new version, still signed in.
        const [stale] = await Promise.all([
          signedIn.waitForResponse((res) => res.url().includes("/_action/")),
          signedIn.getByRole("button", { name: "Log out" }).click(),
        ]);
        assert.equal(stale.status(), 410);
        await signedIn.locator("#who", { hasText: `Signed in as ${USER.email}, page v2` })
          .waitFor();
        assert.ok(!(await signedInNoReload()), "reloaded to the new version");
        await hydratedIsland(signedIn, "LogOut");
        await signedIn.getByRole("status").filter({ hasText: NOTICE }).waitFor();
        assert.equal(await signedIn.getByLabel("Note").inputValue(), "See you");
        assert.equal(await signedIn.locator("html[data-failure]").count(), 0);
        // The new version's action signs out.
        await signedIn.getByRole("button", { name: "Log out" }).click();
        await signedIn.waitForURL(url("/login"));
        await signedIn.goto(url("/me"));
        await signedIn.waitForURL((to) => to.pathname === "/login");
      },
    );

    await signingIn.context().close();
    await signedIn.context().close();
    await scripted.close();
    await lost.close();
    await plain.close();
    await server[Symbol.asyncDispose]();
  });
}

/** A copy of the test app with `V1`, built, in a folder of its own (the deploy edits it). */
async function deployable(): Promise<ProjectCopy> {
  const built = OLD_FRAMEWORK
    // The shared copy is known by what it is made of: the older framework's files are part of it.
    ? await builtCopy(`deploys-old-${await frameworkHash(OLD_FRAMEWORK)}`, V1, {
      finish: (root) => useFramework(root, OLD_FRAMEWORK),
    })
    : await builtCopy("deploys", V1);
  return await copyProject({ from: built, withBuild: true });
}

const FRAMEWORK_FILES = ["lib", "deno.json", "deno.lock", "main.ts"];

/** A short hash of the framework's files in the tree at `from`. */
async function frameworkHash(from: string): Promise<string> {
  const hash = createHash("sha256");
  for (const name of FRAMEWORK_FILES) {
    const path = join(from, name);
    const files = (await Deno.stat(path)).isDirectory ? await filesBelow(path) : [""];
    for (const file of files) {
      hash.update(`${join(name, file)}\n`).update(await Deno.readFile(join(path, file)));
    }
  }
  return hash.digest("hex").slice(0, 12);
}

/** Puts the framework of the tree at `from` in place of the copy's, and builds again. */
async function useFramework(root: string, from: string): Promise<void> {
  for (const name of FRAMEWORK_FILES) {
    await Deno.remove(join(root, name), { recursive: true });
    await run(root, [], ["cp", "-R", join(from, name), join(root, name)]);
  }
  await Deno.remove(join(root, "_build"), { recursive: true });
  await run(root, ["task", "build"]);
}

/**
 * Waits for the line saying this build's assets are kept in KV (none before issue 28). Read from
 * the output as it is: `deno serve --parallel` puts the worker's name before each line.
 */
async function keptInKv(server: TestServer): Promise<void> {
  if (OLD_FRAMEWORK) return;
  const until = Date.now() + 30_000;
  while (!server.stdout.some((line) => line.includes("assets are kept in KV"))) {
    if (Date.now() > until) {
      throw new Error(`no "kept in KV" line in 30 s:\n${server.stdout.join("\n")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The files of the last build, below `_build/static/`, compressed copies included. */
async function builtFiles(root: string): Promise<string[]> {
  const [last] = JSON.parse(await Deno.readTextFile(join(root, "_build/builds.json")));
  return last;
}

/** Deletes every file of `_build/static/` but `keep`; returns what it deleted. */
async function deleteAllBut(root: string, keep: string[]): Promise<string[]> {
  const dir = join(root, "_build/static");
  const gone: string[] = [];
  for await (const path of walk(dir)) {
    const file = path.slice(dir.length + 1);
    if (keep.includes(file)) continue;
    await Deno.remove(path);
    gone.push(file);
  }
  return gone;
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walk(path);
    else yield path;
  }
}

/** Runs deno (or `command`) in `root`; fails the test with its output if it fails. */
async function run(root: string, args: string[], command?: string[]): Promise<void> {
  const [program, ...rest] = command ?? [Deno.execPath(), ...args];
  const { code, stdout, stderr } = await new Deno.Command(program, {
    args: rest,
    cwd: root,
    env: { NODE_ENV: "production" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  assert.equal(code, 0, `${[program, ...rest].join(" ")}:\n${text(stdout)}${text(stderr)}`);
}

/** The island `name` hydrated (another may still be waiting for its chunk). */
async function hydratedIsland(page: Page, name: string): Promise<void> {
  await page.waitForFunction((name) => {
    const first = document.querySelector(`app-island[name="${name}"]`)?.firstElementChild;
    return first && Object.keys(first).some((key) => key.startsWith("__reactFiber"));
  }, name);
}

/** True while the document is the one `mark` was called in: no reload happened since. */
async function mark(page: Page): Promise<() => Promise<boolean>> {
  await page.evaluate(() => Object.assign(globalThis, { stillHere: true }));
  return () => page.evaluate(() => "stillHere" in globalThis);
}

/** The page's requests for the build's assets: those answered 200, and any that were not. */
function watchAssets(page: Page) {
  const loaded: string[] = [];
  const failed: string[] = [];
  page.on("response", (res: Response) => {
    const path = new URL(res.url()).pathname;
    if (!path.startsWith("/_app/")) return;
    if (res.status() === 200) loaded.push(path);
    else failed.push(`${path} → ${res.status()}`);
  });
  page.on("requestfailed", (req) => {
    const path = new URL(req.url()).pathname;
    if (path.startsWith("/_app/")) failed.push(`${path} → failed`);
  });
  return { loaded: () => [...loaded], failed: () => [...failed] };
}
