/**
 * @module
 * Attack 22: the auth settings' times are a session's `expireIn` in KV. `absoluteTimeoutMs:
 * Infinity` ("sessions never end"), a fraction or 10^16 was taken, and then every sign-in and
 * sign-up threw KV's bare TypeError - a 500 each. They are refused, naming the setting.
 */
import assert from "node:assert/strict";
import { resolveAuth } from "../lib/auth/settings.ts";
import { startSession } from "../lib/auth/sessions.ts";
import { createUser } from "../lib/auth/users.ts";

const DAY = 24 * 60 * 60 * 1000;

Deno.test("attack 22: a session time KV cannot expire by is a RangeError naming the setting", async () => {
  for (
    const [name, ms] of [
      ["absoluteTimeoutMs", Infinity],
      ["absoluteTimeoutMs", 1e16],
      ["idleTimeoutMs", (1.5 * 60 * 60 * 1000) / 7],
      ["refreshAfterMs", 401 * DAY],
    ] as const
  ) {
    assert.throws(
      () => resolveAuth({ [name]: ms }, undefined, "http:"),
      { name: "RangeError", message: new RegExp(`auth\\.${name} must be whole milliseconds`) },
    );
  }
  // The longest taken is a session KV keeps.
  await using kv = await Deno.openKv(":memory:");
  const ada = await createUser(kv, { email: "ada@example.com", password: "a long passphrase" });
  const longest = resolveAuth(
    { absoluteTimeoutMs: 400 * DAY, idleTimeoutMs: 400 * DAY },
    [],
    "http:",
  );
  assert.ok(await startSession(kv, ada, longest));
});
