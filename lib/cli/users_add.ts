/**
 * @module
 * `deno task users:add <email> [--role <role>]...`: makes a user in the app's KV store (the one the
 * settings name: `KV_PATH`, as for the server) - the way to the first admin. The password is read
 * from standard input: typed at a terminal without being shown (twice, to catch a typo), or piped
 * (`printf '%s\n' "$PASSWORD" | deno task users:add ...`; its first line). Every failure says what
 * went wrong on stderr and exits non-zero: 2 for a usage mistake (a role `routes/_roles.ts` does
 * not declare among them, refused before the password is asked for), 1 for the rest.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { checkCredentials } from "../auth/credentials.ts";
import { declareRolesFor, refuseUndeclared, ROLE_NAME } from "../auth/role_names.ts";
import { createUser, UserExistsError } from "../auth/users.ts";
import { beingDeleted } from "../auth/user_deletion.ts";
import { settingsOrExit } from "./settings.ts";
import { PROJECT_ROOT } from "./root.ts";
import { storeOrExit } from "./store.ts";

const USAGE = "usage: deno task users:add <email> [--role <role>]\u2026  (the password on stdin)";

function fail(message: string, code = 1): never {
  console.error(`users:add: ${message}`);
  Deno.exit(code);
}

let parsed;
try {
  parsed = parseArgs({
    args: Deno.args,
    options: { role: { type: "string", multiple: true, short: "r" } },
    allowPositionals: true,
  });
} catch (error) {
  fail(`${(error as Error).message}\n${USAGE}`, 2);
}
const { positionals, values } = parsed;
if (positionals.length !== 1) fail(USAGE, 2);
const roles = (values.role ?? []).flatMap((role) => role.split(",")).map((role) => role.trim());
const badRole = roles.find((role) => !ROLE_NAME.test(role));
if (badRole !== undefined) {
  fail(`"${badRole}" is not a role name: letters, digits, _ - . and : (64 at most)`, 2);
}
// Before the password is asked for: a typo is a usage mistake, named with the roles there are.
const declared = await declaredRoles();
try {
  refuseUndeclared(roles, declared && new Set(declared), "--role");
} catch (error) {
  fail((error as RangeError).message, 2);
}

const password = Deno.stdin.isTerminal() ? await typed(positionals[0]) : await piped();
const checked = checkCredentials({ email: positionals[0], password }, true);
if (!checked.ok) {
  const { email, password } = checked.errors;
  fail(
    [email && `email: ${email}`, password && `password: ${password}`].filter(Boolean).join("; "),
  );
}

const kv = await storeOrExit(settingsOrExit().kvPath);
if (declared) declareRolesFor(kv, declared);
try {
  const user = await createUser(kv, { ...checked.credentials, roles });
  const with_ = user.roles.length ? ` with the role${user.roles.length > 1 ? "s" : ""} ` : "";
  console.log(`Created ${user.email}${with_}${user.roles.join(", ")}.`);
} catch (error) {
  if (error instanceof UserExistsError && await beingDeleted(kv, error.email)) {
    // Finishing it here would skip the product's part of the deletion (its `also`): its data.
    fail(
      `the account with the email ${error.email} is being deleted (a deletion cut short). ` +
        "Finish it as the product deletes accounts - its retry job, or deleteUser(kv, email, " +
        "{ id, also }) with the product's own also - then run this again. unfinishedDeletions(kv) " +
        "lists every such account (docs/users.md, Deleting a user).",
    );
  }
  if (error instanceof UserExistsError) fail(error.message);
  throw error;
} finally {
  kv.close();
}

/** `routes/_roles.ts`'s names; undefined when the app declares no roles. */
async function declaredRoles(): Promise<readonly string[] | undefined> {
  try {
    await Deno.stat(join(PROJECT_ROOT, "routes", "_roles.ts"));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  return (await import("../../routes/_roles.ts")).default.names;
}

/** The first line of what was piped in. */
async function piped(): Promise<string> {
  const text = await new Response(Deno.stdin.readable).text();
  return text.split(/\r?\n/)[0];
}

/** Asked twice at the terminal, never shown. */
async function typed(email: string): Promise<string> {
  const first = await hidden(`Password for ${email}: `);
  const again = await hidden("The same again: ");
  if (first !== again) fail("the two passwords differ");
  return first;
}

/**
 * One line typed with the terminal's echo off; Ctrl-C ends the task. The echo goes off before the
 * prompt shows: what is typed (or pasted) the moment the prompt appears is never echoed.
 */
async function hidden(prompt: string): Promise<string> {
  const encoder = new TextEncoder();
  Deno.stdin.setRaw(true);
  const bytes: number[] = [];
  const buffer = new Uint8Array(256);
  try {
    await Deno.stderr.write(encoder.encode(prompt));
    for (;;) {
      const n = await Deno.stdin.read(buffer);
      if (n === null) break;
      for (const byte of buffer.subarray(0, n)) {
        if (byte === 3) {
          Deno.stdin.setRaw(false);
          fail("cancelled", 130);
        }
        if (byte === 13 || byte === 10) return new TextDecoder().decode(new Uint8Array(bytes));
        if (byte === 127 || byte === 8) bytes.pop();
        else bytes.push(byte);
      }
    }
    return new TextDecoder().decode(new Uint8Array(bytes));
  } finally {
    Deno.stdin.setRaw(false);
    await Deno.stderr.write(encoder.encode("\n"));
  }
}
