/**
 * @module
 * Sentry's own tracing (no Deno OTel) in a server whose route imports a module with `import()` the
 * first time it is asked, as a product route may: one app, one SDK init, served on a loopback
 * port as in production. Deno evaluates a module first imported with `import()` inside the
 * importer's async context, and leaves that context current afterwards, so `Deno.serve` calls
 * every later request's handler inside the first request's context (its Sentry scopes, its ended
 * transaction as the active span). Every later request must still get a transaction of its own,
 * sent, on a trace of its own, and its page must name that trace.
 */
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { appFromEnv } from "../lib/cli/app.ts";
import { readSettings } from "../lib/cli/settings.ts";
import { isTransaction, type ReceivedItem, startSentryReceiver } from "shell/testing";
import { memoryManifest, serveApp } from "./helpers/app.ts";
import { tempDir } from "./helpers/temp_dir.ts";

function Clock() {
  return <h1>About</h1>;
}

/** The requests after the one that imports: a few are enough, each must arrive. */
const LATER_REQUESTS = 4;

const named = (name: string) => (item: ReceivedItem) =>
  isTransaction(item) && item.payload.transaction === name;
const traceOf = (item: ReceivedItem): string => item.payload.contexts.trace.trace_id;

Deno.test({
  name: "sentry (server): a route's first import() leaves later requests their own transactions",
  // The SDK keeps timers and connections of its own: not leaks of the app's.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // A module no one has imported yet in this process, as a product's lazily loaded one is.
    await using dir = await tempDir();
    const lazyModule = pathToFileURL(`${dir.path}/lazy.ts`).href;
    await Deno.writeTextFile(`${dir.path}/lazy.ts`, `export const answer = "imported";\n`);
    await using receiver = startSentryReceiver();
    const manifest = memoryManifest({
      routes: {
        "lazy.ts": {
          handler: {
            async GET() {
              const { answer } = await import(lazyModule);
              return new Response(answer);
            },
          },
        },
        // An island: only a page with one carries the trace's meta tags.
        "about.tsx": { default: () => <Clock /> },
      },
      islands: { Clock },
    });
    const env: Record<string, string> = {
      SENTRY_DSN: receiver.dsn,
      SENTRY_TRACES_SAMPLE_RATE: "1",
      // This test's own fetches, made with the same SDK in the process, carry no trace to continue.
      SENTRY_TRACE_PROPAGATION_TARGETS: "https://api.example.com",
      KV_PATH: ":memory:",
    };
    const { app } = await appFromEnv(manifest, readSettings((name) => env[name]));
    await using served = serveApp(app);

    assert.equal(await (await served.fetch("/lazy")).text(), "imported");
    const first = await receiver.waitFor(named("GET /lazy"));

    const traces = new Set([traceOf(first)]);
    for (let i = 0; i < LATER_REQUESTS; i++) {
      const html = await (await served.fetch("/about")).text();
      const transaction = await receiver.waitFor((item) =>
        named("GET /about")(item) && !traces.has(traceOf(item))
      );
      traces.add(traceOf(transaction));
      assert.match(html, new RegExp(`<meta name="sentry-trace" content="${traceOf(transaction)}-`));
    }
    assert.equal(traces.size, 1 + LATER_REQUESTS, "each request on a trace of its own");
  },
});
