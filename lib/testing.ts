/**
 * The test kit for an app's own tests: `import { ... } from "shell/testing"`. A client that talks
 * to the app as a browser does - in-process or over HTTP, with a cookie jar - submits a page's
 * forms as a browser without JavaScript would and calls server actions as an island does; the app's
 * log lines per request; a local stand-in for Sentry that reads what the real SDK sends; and the
 * app in a process of its own (`deno task start`, `deno serve --parallel`), for what only a process
 * shows. Test-only: nothing here belongs in an app's modules.
 *
 * @example
 * ```ts
 * // tests/home_test.ts
 * import assert from "node:assert/strict";
 * import manifest from "@/_build/manifest.gen.ts";
 * import { createApp } from "shell/server";
 * import { TestClient } from "shell/testing";
 *
 * const app = createApp(manifest, { root: Deno.cwd(), kv: await Deno.openKv(":memory:") });
 *
 * Deno.test("the home page, and a page that is not there", async () => {
 *   const client = new TestClient(app);
 *   assert.equal((await client.get("/")).status, 200);
 *   const missing = await client.get("/no/such/page");
 *   assert.equal(missing.status, 404);
 *   await missing.body?.cancel();
 * });
 * ```
 * @see docs/testing.md
 * @module
 */
export {
  type CallOptions,
  type ClientCookie,
  type ClientRequestInit,
  type FieldValue,
  type InProcess,
  type LoadedPage,
  type SubmitOptions,
  type Target,
  TestClient,
  type TestClientOptions,
} from "./testing/client.ts";
export { captureLogs, type LogLine, type Logs } from "./testing/logs.ts";
export { type JobTry, type JobWatch, runJob, watchJobs } from "./testing/jobs.ts";
export {
  isErrorEvent,
  isTransaction,
  type ReceivedItem,
  type ReceivedRequest,
  type ReceiverOptions,
  type SentryReceiver,
  startSentryReceiver,
} from "./testing/sentry_receiver.ts";
export { type ServerOptions, type StartedServer, startServer } from "./testing/server.ts";
