/**
 * @module
 * Attack 22: the auth settings' times are a session's `expireIn` in KV. `absoluteTimeoutMs:
 * Infinity` ("sessions never end"), a fraction or 10^16 was taken, and then every sign-in and
 * sign-up threw KV's bare TypeError - a 500 each. They are refused, naming the setting, when the
 * app is made.
 */
import assert from "node:assert/strict";
import { type AuthOptions, resolveAuth } from "../lib/auth/settings.ts";
import { startSession } from "../lib/auth/sessions.ts";
import { createUser } from "../lib/auth/users.ts";
import { memoryApp } from "./helpers/app.ts";

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

Deno.test("a setting that cannot be used stops the app's making, not each request that reads it", async () => {
  // Before: createApp took it, and every request reading a session (each page of a signed-in
  // area, each sign-in) threw it - a 500 each, found in production at the first visit.
  using kv = await Deno.openKv(":memory:");
  const made = (auth: AuthOptions) => () => memoryApp({ routes: {} }, { kv, auth });
  assert.throws(made({ absoluteTimeoutMs: Infinity }), /auth\.absoluteTimeoutMs must be whole/);
  assert.throws(
    made({ signUpPerClient: { limit: 0, windowMs: 60_000 } }),
    /auth\.signUpPerClient: a limit of 0/,
  );
  assert.throws(made({ loginPath: "https://evil.example/login" }), /auth\.loginPath must be/);
  for (const sessionsPerUser of [0, 1.5, NaN, 101]) {
    assert.throws(
      made({ sessionsPerUser }),
      /auth\.sessionsPerUser must be a whole number from 1 to 100/,
    );
  }
  await made({ idleTimeoutMs: 400 * DAY, sessionsPerUser: 100 })().close();
});

Deno.test("a refresh not shorter than the idle timeout stops the app's making: sessions in use ended as if idle", async () => {
  // Before: an idle timeout of 2 minutes beside the default refresh of 5 was taken, and a session
  // used every 30 seconds ended 2 minutes after its sign-in - its idle timer never written back.
  using kv = await Deno.openKv(":memory:");
  const made = (auth: AuthOptions) => () => memoryApp({ routes: {} }, { kv, auth });
  const refused = /auth\.refreshAfterMs \(\d+, 300000 unless set\) must be less than auth\.idle/;
  assert.throws(made({ idleTimeoutMs: 2 * 60_000 }), refused);
  assert.throws(made({ idleTimeoutMs: 60_000, refreshAfterMs: 60_000 }), refused);
  await made({ idleTimeoutMs: 2 * 60_000, refreshAfterMs: 60_000 })().close();
});
