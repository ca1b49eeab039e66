/**
 * @module
 * The server's Sentry SDK in production is one of the build's bundles of it
 * (`lib/build/sentry_server_sdk.ts`, loaded by `lib/sentry/sdk.ts`): minified modules that import
 * nothing but Node's built-ins and `@opentelemetry/api` (shared with Deno's tracing), and the one
 * the Sentry modules call — not a second copy of the SDK beside it. On Deno's OpenTelemetry the
 * errors-only bundle, without the SDK's tracing and the integrations only `init` brings
 * (tests/process/server_memory_test.ts). What each saves is measured in the bench (memory beside
 * the limit).
 */
import assert from "node:assert/strict";
import { PROJECT_ROOT } from "./helpers/project_copy.ts";

const bundle = (name: string) => new URL(`_build/server-sdk/${name}.js`, `file://${PROJECT_ROOT}`);

Deno.test("sentry sdk bundles: minified, importing only node:* and @opentelemetry/api", async () => {
  const sizes: Record<string, number> = {};
  for (const name of ["sdk", "sdk_tracing"]) {
    const code = await Deno.readTextFile(bundle(name));
    const imports = new Set([...code.matchAll(/\bfrom\s*"([^"]+)"/g)].map(([, from]) => from));
    for (const from of imports) assert.match(from, /^(node:|@opentelemetry\/api$)/, name);
    assert.ok(!code.includes("__SENTRY_DEBUG__"), `${name}: the debug logging compiled out`);
    assert.ok(code.split("\n").length < 50, `${name}: minified`);
    sizes[name] = code.length;
  }
  // Errors only: none of the integrations' code that `init`'s default list brings.
  const errorsOnly = await Deno.readTextFile(bundle("sdk"));
  for (const integration of ["DenoServe", "DenoHttp", "Koa", "Mongo", "Postgres", "Breadcrumbs"]) {
    assert.ok(!errorsOnly.includes(`"${integration}"`), integration);
  }
  assert.ok(sizes.sdk < sizes.sdk_tracing / 2, JSON.stringify(sizes));
});

Deno.test("sentry sdk bundles: in production, the Sentry modules run one bundle's SDK", async () => {
  assert.equal(Deno.env.get("NODE_ENV"), "production");
  // No Deno tracing in this process: the bundle with the SDK's tracing, for both modules.
  const [sdk, tracing, bundled, packages] = await Promise.all([
    import("../lib/sentry/sdk.ts"),
    import("../lib/sentry/sdk_tracing.ts"),
    import(bundle("sdk_tracing").href),
    import("@sentry/core"),
  ]);
  for (const name of ["initAndBind", "captureException", "withScope", "flush"] as const) {
    assert.equal(sdk[name], bundled[name], name);
    assert.notEqual(sdk[name], packages[name], name);
  }
  for (const name of ["init", "withIsolationScope", "startSpanManual"] as const) {
    assert.equal(tracing[name], bundled[name], name);
  }
});
