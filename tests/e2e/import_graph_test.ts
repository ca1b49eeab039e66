/**
 * @module
 * Freshness and watching follow the import graph, on a copy of the project with files of the
 * test's own: a `components/` folder whose modules an island and a route import through the
 * project's aliases (`@/components/…`, `shell/runtime`, and a server action by `@/routes/…`).
 *  - `deno task start` after an edit under `components/` rebuilds: the island's chunk and the
 *    server's HTML agree, and the page hydrates without a mismatch (before, it served the old
 *    bundle beside the new server code).
 *  - `deno task dev` sees the edit: an island-only component updates in place, state kept; one the
 *    page renders itself reloads the page. An undo — an island back to what the page loaded —
 *    updates in place too (before, it reloaded: "is not a component module").
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { launchBrowser, pageErrors } from "../helpers/browser.ts";
import { reloadsAfter, SHOWN_MS, updatedAfter } from "../helpers/dev_page.ts";
import { copyProject, type ProjectCopy } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";

/** Text only the server action holds: the browser's bundle must not. */
const SERVER_ONLY = "the greeter's server-only secret";

const FILES = {
  "components/Greeting.tsx": `/** Rendered by the page itself and inside the island. */
export function Greeting() {
  return <b className="greeting">Hello, version one</b>;
}
`,
  "components/Badge.tsx": `/** Rendered by the island only. */
export function Badge({ count }: { count: number }) {
  return <output className="badge">count {count}</output>;
}
`,
  "routes/_greeter/actions.ts": `"use server";
const SECRET = ${JSON.stringify(SERVER_ONLY)};

export async function greet(): Promise<number> {
  return await Promise.resolve(SECRET.length);
}
`,
  "islands/Greeter.tsx": `import { useEffect, useState } from "react";
import { actionStatus } from "shell/runtime";
import { Badge } from "@/components/Badge.tsx";
import { Greeting } from "@/components/Greeting.tsx";
import { greet } from "@/routes/_greeter/actions.ts";

export default function Greeter() {
  const [count, setCount] = useState(0);
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return (
    <div className="greeter" data-hydrated={hydrated ? "yes" : undefined}>
      <Greeting />
      <Badge count={count} />
      <button type="button" onClick={() => setCount((n) => n + 1)}>More</button>
      <button type="button" onClick={() => greet().catch(actionStatus)}>Greet</button>
    </div>
  );
}
`,
  "routes/greet.tsx": `import { Greeting } from "@/components/Greeting.tsx";
import Greeter from "@/islands/Greeter.tsx";

export default function GreetPage() {
  return (
    <>
      <title>Greet</title>
      <h1>
        <Greeting />
      </h1>
      <Greeter />
    </>
  );
}
`,
};

async function withFiles(): Promise<ProjectCopy> {
  const copy = await copyProject();
  for (const [path, source] of Object.entries(FILES)) await copy.write(path, source);
  return copy;
}

function editor(copy: ProjectCopy) {
  return async (path: string, from: string, to: string) => {
    const text = await Deno.readTextFile(join(copy.root, path));
    assert.ok(text.includes(from), `${path} contains ${from}`);
    await copy.write(path, text.replace(from, to));
  };
}

/** The greetings the page shows: the page's own, then the island's; once hydrated. */
async function greetings(page: Page): Promise<string[]> {
  await page.locator(".greeter[data-hydrated]").waitFor({ timeout: SHOWN_MS });
  return await page.locator(".greeting").allTextContents();
}

Deno.test("deno task start rebuilds after an edit under components/: no stale island", async () => {
  await using copy = await withFiles();
  // The first start builds: there is no build yet.
  {
    await using server = await startServer({}, { root: copy.root });
    assert.match(await (await server.fetch("/greet")).text(), /Hello, version one/);
  }
  await editor(copy)("components/Greeting.tsx", "version one", "version two");

  await using server = await startServer({}, { root: copy.root });
  const html = await (await server.fetch("/greet")).text();
  assert.equal(html.match(/Hello, version two/g)?.length, 2, "the page's and the island's");
  const chunk = /<app-island name="Greeter" src="(\/_app\/Greeter-\w+\.js)"/.exec(html)?.[1];
  assert.ok(chunk, html);
  // The island's code, with what it imports.
  const code = await (await server.fetch(chunk)).text();
  const imported = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)"/g)]
    .map((match) => match[1]);
  const bundle = [
    code,
    ...await Promise.all(imported.map(async (url) => {
      return await (await server.fetch(url)).text();
    })),
  ].join("\n");
  assert.ok(bundle.includes("Hello, version two"), "the island's chunk has the edit");
  assert.ok(!bundle.includes("Hello, version one"), "and not the code before it");
  assert.ok(!bundle.includes(SERVER_ONLY), "the aliased action is a stub in the browser");

  await using browser = await launchBrowser();
  const page = await browser.newPage();
  const errors = pageErrors(page);
  await page.goto(server.origin + "/greet");
  assert.deepEqual(await greetings(page), ["Hello, version two", "Hello, version two"]);
  assert.deepEqual(errors, [], "hydrated without a mismatch");
});

Deno.test("deno task dev follows components/; an undo updates in place", async () => {
  await using copy = await withFiles();
  await using server = await startServer({ NODE_ENV: "development" }, {
    root: copy.root,
    script: "lib/cli/dev.ts",
  });
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  const edit = editor(copy);
  await page.goto(server.origin + "/greet");
  assert.deepEqual(await greetings(page), ["Hello, version one", "Hello, version one"]);
  const more = page.getByRole("button", { name: /More|Add/ });
  for (let i = 0; i < 3; i++) await more.click();
  const badge = page.locator(".badge");
  assert.equal(await badge.textContent(), "count 3");

  // The island itself, then back to what the page loaded: in place both times.
  await updatedAfter(page, () => edit("islands/Greeter.tsx", ">More<", ">Add<"));
  assert.equal(await more.textContent(), "Add");
  await updatedAfter(page, () => edit("islands/Greeter.tsx", ">Add<", ">More<"));
  assert.equal(await more.textContent(), "More");
  assert.equal(await badge.textContent(), "count 3", "state kept");

  // A component only the island renders: in place, state kept; and its undo.
  await updatedAfter(page, () => edit("components/Badge.tsx", "count {count}", "clicks {count}"));
  assert.equal(await badge.textContent(), "clicks 3");
  await updatedAfter(page, () => edit("components/Badge.tsx", "clicks {count}", "count {count}"));
  assert.equal(await badge.textContent(), "count 3");

  // A component the page renders itself: the page reloads with it, the island too.
  await reloadsAfter(page, () => edit("components/Greeting.tsx", "version one", "version two"));
  assert.deepEqual(await greetings(page), ["Hello, version two", "Hello, version two"]);
});
