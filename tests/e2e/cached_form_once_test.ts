/**
 * @module
 * A form outside any island, on a page served from the shared page cache, with JavaScript on, in
 * Chromium: the cache stores the page without its forms' submission keys, so the boot runtime gives
 * the form one at submit (`lib/client/submission_key.ts`). A second click while the first post's
 * answer is on its way (held here until the second click) sends the same key: the action runs once.
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import { hydrated, launchBrowser } from "../helpers/browser.ts";
import { doubleClickHoldingFirstAnswer } from "../helpers/double_click.ts";
import { startServer } from "../helpers/server.ts";

const FILES = {
  "routes/_tally/actions.ts": `"use server";
import { requestContext } from "../../lib/mod.ts";
import { kvOf } from "../../lib/data.ts";

export async function addOne(form: FormData): Promise<void> {
  const kv = kvOf(requestContext());
  await kv.atomic().sum(["tally", String(form.get("what"))], 1n).commit();
}
`,
  "routes/tally.tsx": `import Counter from "../islands/Counter.tsx";
import { addOne } from "./_tally/actions.ts";

export const cache = { maxAge: 600 };

export default function Tally() {
  return (
    <main>
      <form action={addOne}>
        <input name="what" aria-label="What" />
        <button>Add one</button>
      </form>
      <Counter start={0} since={new Date(0)} tags={new Set()} scores={new Map()} home={new URL("http://localhost/")} />
    </main>
  );
}
`,
  "routes/api/tally.ts": `import { kvOf } from "../../lib/data.ts";
export const handler = {
  async GET(req: Request, ctx: any) {
    const what = new URL(req.url).searchParams.get("what") ?? "";
    return Response.json({ n: String((await kvOf(ctx).get(["tally", what])).value ?? 0n) });
  },
};
`,
};

Deno.test("a cached page's form outside islands, clicked twice with JavaScript on, runs once", async () => {
  const root = await builtCopy("cached-form-once", FILES);
  await using server = await startServer(
    (port) => ({ LOG_REQUESTS: "1", APP_ORIGIN: `http://127.0.0.1:${port}` }),
    { root },
  );
  const tally = async (what: string) =>
    (await (await server.fetch(`/api/tally?what=${what}`)).json()).n;
  const posts = () =>
    server.logs().filter((line) =>
      line.method === "POST" && String(line.path).startsWith("/_action/")
    );
  // The second load is the cache's copy: stored without the form's key.
  await (await server.fetch("/tally")).body?.cancel();
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  const loaded = await page.goto(server.origin + "/tally");
  assert.equal(await loaded?.headerValue("x-cache"), "HIT");
  await hydrated(page);
  assert.equal(await page.locator('input[name="$ACTION_ONCE"]').count(), 0, "no key in the copy");

  await page.getByLabel("What").fill("clicks");
  await doubleClickHoldingFirstAnswer(page, page.getByRole("button", { name: "Add one" }));
  await server.waitForLog(() => posts().length >= 2);
  await page.waitForURL(server.origin + "/tally");
  assert.deepEqual(posts().map((line) => line.status), [303, 303]);
  assert.equal(await tally("clicks"), "1", "two posts of one submission: one effect");
});
