/**
 * Attack 15, finding 3: a NODE_ENV that is neither `development` nor `production` (`staging`,
 * `test`) is production to the framework (docs/settings.md: "anything else: production"), but
 * React loads its development build for anything but `production`: and React's development
 * server renderer writes a Suspense boundary's error - its message and its stack, file paths
 * included - into the streamed page for the browser's console. The production page must carry
 * only the digest. Checked over HTTP against a real server, started as `deno serve main.ts` is
 * started on a platform that sets NODE_ENV=staging.
 */
import assert from "node:assert/strict";
import { builtTarget, startTarget } from "./target.ts";

const SECRET = "db password=hunter2";

const FILES = {
  "routes/findings/late.tsx": `import { Suspense, use } from "react";
    function Late(): never {
      use(new Promise((resolve) => setTimeout(resolve, 20)));
      throw new Error(${JSON.stringify(SECRET)});
    }
    export default function Page() {
      return <main><Suspense fallback={<p>loading</p>}><Late /></Suspense></main>;
    }
  `,
};

/** How each entry point is started: `deno task start`'s server, and `deno serve main.ts`. */
const ENTRIES: Record<string, ((port: number) => string[]) | undefined> = {
  "lib/cli/start.ts": undefined,
  "deno serve main.ts": (
    port,
  ) => ["serve", "-A", "--host", "127.0.0.1", "--port", `${port}`, "main.ts"],
};

Deno.test("finding 3: NODE_ENV=staging is production, React's build included", async (t) => {
  const built = await builtTarget(FILES);
  for (const [entry, args] of Object.entries(ENTRIES)) {
    await t.step(entry, async () => {
      await using server = await startTarget({ NODE_ENV: "staging" }, { root: built.root, args });
      const res = await server.fetch("/findings/late");
      const page = await res.text();
      assert.equal(res.status, 200, "the shell went out before the boundary failed");
      assert.ok(!page.includes("hunter2"), "the error's message is in the page");
      assert.ok(!page.includes("late.tsx"), "the error's stack is in the page");
      const failure = server.logs().find((line) => line.level === "error");
      assert.ok(failure?.digest, "the failure is logged with its digest");
      assert.ok(page.includes(String(failure.digest)), "the page carries the digest");
    });
  }
});
