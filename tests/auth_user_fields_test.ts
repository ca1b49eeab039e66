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

Deno.test("a name or an email with a bidi control, or a name showing nothing, is refused; emoji sequences and marks are not", async () => {
  using kv = await Deno.openKv(":memory:");
  // "\u202E" turns what follows around: this address reads "ada@example.com", the name "admin".
  for (const email of ["ada@\u202Emoc.elpmaxe", "ada\u2067@example.com"]) {
    assert.equal(normalizeEmail(email), undefined, JSON.stringify(email));
    assert.deepEqual(checkCredentials({ email, password: PASSWORD }, true), {
      ok: false,
      errors: { email: "That is not an email address." },
    });
  }
  const refused = ["\u202Enimda", "Ada\u202A", "Ada \u2066x\u2069", "\u200B", " \u200D\u2060 "];
  for (const [i, name] of refused.entries()) {
    await assert.rejects(
      () => createUser(kv, { email: `user${i}@example.com`, password: PASSWORD, name }),
      RangeError,
      JSON.stringify(name),
    );
  }
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["auth", "users"] })), []);
  // A family of four (ZWJ sequences, 11 units each) up to the bound, and combining marks.
  const family = "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}";
  const names = [family.repeat(18), "Zoe\u0308 Ame\u0301lie", "\u0645\u0631\u06CC\u200C\u0645"];
  for (const [i, name] of names.entries()) {
    const user = await createUser(kv, { email: `ok${i}@example.com`, password: PASSWORD, name });
    assert.equal(user.name, name);
  }
});
