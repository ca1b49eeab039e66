/**
 * @module
 * Development: a copy of every envelope goes to the Spotlight sidecar (`npx
 * @spotlightjs/spotlight`), which shows errors and traces locally. `@sentry/deno` has no
 * `spotlight` option, so this is the browser SDK's Spotlight integration, for the server. Its name
 * starts with "Spotlight" so that the SDK sets integrations up even when there is no DSN (Spotlight
 * only).
 */
import { defineIntegration, serializeEnvelope, suppressTracing } from "./sdk.ts";

const MAX_FAILURES = 3;

export const spotlightIntegration = defineIntegration((sidecarUrl: string) => ({
  name: "SpotlightDeno",
  setup(client) {
    let failures = 0;
    client.on("beforeEnvelope", (envelope) => {
      if (failures > MAX_FAILURES) return; // no sidecar running: stop trying
      suppressTracing(() =>
        fetch(sidecarUrl, {
          method: "POST",
          body: serializeEnvelope(envelope) as BodyInit,
          headers: { "Content-Type": "application/x-sentry-envelope" },
        })
      ).then((res) => {
        failures = res.ok ? 0 : failures + 1;
        return res.body?.cancel();
      }, () => failures++);
    });
  },
}));
