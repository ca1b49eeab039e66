/**
 * @module
 * The boot runtime keys a form outside any island as it is submitted to a server action
 * (`lib/client/submission_key.ts`), by where it posts: the submitter's `formaction`, which the
 * browser resolves against the document's base URL. On a page with `<base href>` a relative
 * `formaction` was resolved against the page's own URL instead, taken for no action's, and the form
 * was posted without a key (not deduplicated).
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import { hydrated, launchBrowser } from "../helpers/browser.ts";
import { startServer } from "../helpers/server.ts";

const FILES = {
  "routes/_note/actions.ts": `"use server";
export async function note(_form: FormData): Promise<void> {}
`,
  "routes/deep/note.tsx": `import Counter from "../../islands/Counter.tsx";
import { note } from "../_note/actions.ts";

export default function Note() {
  return (
    <main>
      <base href="/" />
      <form action={note}>
        <input name="what" aria-label="What" />
        <button>Plain</button>
        <button formMethod="post">Relative</button>
      </form>
      <Counter start={0} since={new Date(0)} tags={new Set()} scores={new Map()} home={new URL("http://localhost/")} />
    </main>
  );
}
`,
};

Deno.test("a submitter's relative formaction on a page with <base href> is keyed as the action it posts to", async () => {
  const root = await builtCopy("submission-key-base", FILES);
  await using server = await startServer({}, { root });
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(server.origin + "/deep/note");
  await hydrated(page);
  // The action's URL relative to the base (`/`): against the page's URL it would be /deep/_action/...
  const action = await page.locator("form").getAttribute("action");
  assert.match(action ?? "", /^\/_action\//);
  await page.getByRole("button", { name: "Relative" }).evaluate(
    (button, href) => button.setAttribute("formaction", href),
    action!.slice(1),
  );
  assert.equal(
    await page.getByRole("button", { name: "Relative" }).evaluate((b: HTMLButtonElement) =>
      b.formAction
    ),
    server.origin + action,
    "the browser posts it to the action",
  );
  // What each submit carries once the runtime's listener (on the document) ran; not posted.
  await page.evaluate(() => {
    const seen: string[] = [];
    (globalThis as unknown as { seen: string[] }).seen = seen;
    addEventListener("submit", (event) => {
      const form = event.target as HTMLFormElement;
      const key = form.elements.namedItem("$ACTION_ONCE") as Element | null;
      seen.push(`${(event as SubmitEvent).submitter?.textContent}: ${key ? "keyed" : "no key"}`);
      key?.remove();
      event.preventDefault();
    });
  });
  await page.getByRole("button", { name: "Plain" }).click();
  await page.getByRole("button", { name: "Relative" }).click();
  const seen = await page.evaluate(() => (globalThis as unknown as { seen: string[] }).seen);
  assert.deepEqual(seen, ["Plain: keyed", "Relative: keyed"]);
});
