/**
 * @module
 * A form state's restore that fails (its secret or its claim in KV) is traced as the 500 it is
 * answered with. Hono answers an Error at the layer that throws it: the restore is a layer inside
 * the telemetry's middleware, so the middleware sees the answer. Made one layer with it (perf36,
 * reverted), the failure went through the middleware as a throw and a span ended in a `finally`
 * recorded a 200.
 */
import assert from "node:assert/strict";
import { captureLogs } from "shell/testing";
import type { Telemetry } from "../lib/server/telemetry.ts";
import { memoryApp } from "./helpers/app.ts";

/** A store whose form-state secret cannot be read: every restore fails. */
function failingSecret(kv: Deno.Kv): Deno.Kv {
  return new Proxy(kv, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name !== "get") return typeof value === "function" ? value.bind(target) : value;
      return (key: Deno.KvKey, options?: { consistency?: Deno.KvConsistencyLevel }) => {
        if (key[1] === "secret") return Promise.reject(new Error("KV is down"));
        return target.get(key, options);
      };
    },
  });
}

Deno.test("a restore that fails under the telemetry's middleware: the middleware sees the 500 answered", async () => {
  using kv = await Deno.openKv(":memory:");
  const statuses: number[] = [];
  const telemetry: Telemetry = {
    // As the OpenTelemetry plugin names its span: from the response, in a `finally`.
    middleware: async (c, next) => {
      try {
        await next();
      } finally {
        statuses.push(c.res.status);
      }
    },
    captureFailure: () => ({ trace_id: null, span_id: null, sentry_event_id: null }),
    flush: () => Promise.resolve(),
  };
  const app = memoryApp({ routes: { "index.tsx": { default: () => <p>home</p> } } }, {
    kv: failingSecret(kv),
    telemetry,
  });
  try {
    using _logs = captureLogs(); // the failure's line
    const res = await app.request("http://localhost/", {
      headers: { cookie: "app-form-state=anything" },
    });
    await res.body?.cancel();
    assert.equal(res.status, 500);
    assert.deepEqual(statuses, [500]);
  } finally {
    await app.close();
  }
});
