/**
 * @module
 * What `createUser` and sign-up take as a user's email and name: an email with a lone surrogate
 * is none (KV keyed it as U+FFFD: two addresses, one key), and a name given in code is 1 to 200
 * characters, not blank, without control characters or lone surrogates - a `RangeError` naming
 * it, where any string (a megabyte, NUL, "") was stored and shown.
 */
import assert from "node:assert/strict";
import { createUser, normalizeEmail } from "../lib/auth.ts";
import { checkCredentials } from "../lib/auth/credentials.ts";

const PASSWORD = "correct horse battery";

Deno.test("an email with a lone surrogate is no address: a field error from a form, a RangeError from code", async () => {
  using kv = await Deno.openKv(":memory:");
  for (const email of ["ada\uD800@example.com", "ada@exa\uDC00mple.com"]) {
    assert.equal(normalizeEmail(email), undefined);
    assert.deepEqual(checkCredentials({ email, password: PASSWORD }, true), {
      ok: false,
      errors: { email: "That is not an email address." },
    });
    await assert.rejects(() => createUser(kv, { email, password: PASSWORD }), RangeError);
  }
  // A whole pair is a character like any other.
  assert.equal(normalizeEmail("ada\uD83D\uDE00@example.com"), "ada\uD83D\uDE00@example.com");
});

Deno.test("createUser: a name that cannot be shown is a RangeError naming it; none stored", async () => {
  using kv = await Deno.openKv(":memory:");
  const names = ["", "   ", "x".repeat(201), "Ada\u0000", "Ada\nLovelace", "Ada\uD800"];
  for (const [i, name] of names.entries()) {
    await assert.rejects(
      () => createUser(kv, { email: `user${i}@example.com`, password: PASSWORD, name }),
      (error: Error) =>
        error instanceof RangeError &&
        /^createUser: name must be 1 to 200 characters, not blank, without control/.test(
          error.message,
        ),
    );
  }
  await assert.rejects(
    () => createUser(kv, { email: "num@example.com", password: PASSWORD, name: 7 as never }),
    /^TypeError: createUser: name must be a string, not number$/,
  );
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["auth", "users"] })), []);
  const ada = await createUser(kv, {
    email: "ada@example.com",
    password: PASSWORD,
    name: "Ada Lovelace \u{1F600}".padEnd(200, "."),
  });
  assert.equal(ada.name.length, 200);
});

Deno.test("a name taken from the email is cut by characters, never between a surrogate pair", async () => {
  using kv = await Deno.openKv(":memory:");
  const user = await createUser(kv, {
    email: `${"a".repeat(39)}\u{1F600}z@example.com`,
    password: PASSWORD,
  });
  assert.equal(user.name, `${"a".repeat(39)}\u{1F600}`);
  assert.ok(user.name.isWellFormed());
});
