/**
 * @module
 * The server's Sentry SDK in production is the build's bundle of it (`lib/build/sentry_server_sdk.ts`,
 * loaded by `lib/sentry/sdk.ts`): one minified module that imports nothing but Node's built-ins and
 * `@opentelemetry/api` (shared with Deno's tracing), and the one the Sentry modules call — not a
 * second copy of the SDK beside it. What it saves is measured in the bench (memory beside the limit).
 */
import assert from "node:assert/strict";
import { PROJECT_ROOT } from "./helpers/project_copy.ts";

const BUNDLE = new URL("_build/server-sdk.js", `file://${PROJECT_ROOT}`);

Deno.test("sentry sdk bundle: minified, importing only node:* and @opentelemetry/api", async () => {
  const code = await Deno.readTextFile(BUNDLE);
  const imports = new Set([...code.matchAll(/\bfrom\s*"([^"]+)"/g)].map(([, from]) => from));
  assert.ok(imports.size > 0);
  for (const from of imports) assert.match(from, /^(node:|@opentelemetry\/api$)/);
  assert.ok(!code.includes("__SENTRY_DEBUG__"), "the debug logging compiled out");
  assert.ok(code.split("\n").length < 50, "minified");
});

Deno.test("sentry sdk bundle: in production, the Sentry modules run the bundle's SDK", async () => {
  assert.equal(Deno.env.get("NODE_ENV"), "production");
  const [sdk, bundle, packages] = await Promise.all([
    import("../lib/sentry/sdk.ts"),
    import(BUNDLE.href),
    import("@sentry/deno"),
  ]);
  for (const name of ["init", "captureException", "withScope", "flush"] as const) {
    assert.equal(sdk[name], bundle[name], name);
    assert.notEqual(sdk[name], packages[name], name);
  }
});
