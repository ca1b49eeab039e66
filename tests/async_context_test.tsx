/**
 * Each request starts in a context of its own. Deno runs a module that `import()` loads for the
 * first time in the importing request's async context, and leaves that context current: without
 * lib/server/fresh_context.ts, a page's handler asking `requestContext()` (which throws outside an
 * action) got the earlier action's request — bob reading alice's headers. Over real HTTP, as Deno
 * serves it. (Sentry's scopes after such an import: tests/sentry_dynamic_import_test.tsx.)
 */
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { encodeCall } from "../lib/shared/action_wire.ts";
import { requestContext } from "../lib/mod.ts";
import { actionIdOf, memoryApp, serveApp } from "./helpers/app.ts";

Deno.test("an action's first import() leaves later requests no context of its request", async () => {
  const dir = await Deno.makeTempDir({ prefix: "first-import-" });
  try {
    // A module no request has imported yet: its first import() is what leaves the context behind.
    const lazy = pathToFileURL(`${dir}/lazy.ts`).href;
    await Deno.writeTextFile(`${dir}/lazy.ts`, "export const loaded = true;\n");
    const FILE = "routes/_who/actions.ts";
    const app = memoryApp({
      routes: {
        "who.ts": {
          handler: {
            GET() {
              try {
                return new Response(`leaked: ${requestContext().req.header("x-user")}`);
              } catch {
                return new Response("no request context");
              }
            },
          },
        },
      },
      actions: {
        [FILE]: {
          async load() {
            await import(lazy);
            return requestContext().req.header("x-user");
          },
        },
      },
    });
    await using served = serveApp(app);
    assert.equal(await (await served.fetch("/who")).text(), "no request context");
    const called = await served.fetch(`/_action/${actionIdOf(FILE, "load")}`, {
      method: "POST",
      body: encodeCall([]),
      headers: { Origin: served.origin, "x-user": "alice" },
    });
    assert.equal(called.status, 200);
    await called.body?.cancel();
    for (let i = 0; i < 3; i++) {
      const res = await served.fetch("/who", { headers: { "x-user": "bob" } });
      assert.equal(await res.text(), "no request context");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
