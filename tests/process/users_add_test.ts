/**
 * @module
 * `deno task users:add <email> [--role <role>]…`, as an operator runs it: the password piped in,
 * or typed at a terminal (a pseudo-terminal from `script`, the prompt awaited before typing) where
 * it is never echoed; the user lands in the store `KV_PATH` names, hashed, with the roles; every
 * mistake says what is wrong and exits non-zero.
 */
import assert from "node:assert/strict";
import { createUser, findUser } from "../../lib/auth/users.ts";
import { deleteUser } from "../../lib/auth/user_deletion.ts";
import { verifyPassword } from "../../lib/auth/password.ts";
import { tempStore } from "../helpers/kv.ts";
import { copyProject, PROJECT_ROOT } from "../helpers/project_copy.ts";

const PASSWORD = "typed-at-a-terminal-42";

async function usersAdd(
  args: string[],
  env: Record<string, string>,
  stdin: string,
  cwd = PROJECT_ROOT,
) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "users:add", ...args],
    cwd,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes).trim();
  return { code, stdout: decode(stdout), stderr: decode(stderr) };
}

Deno.test("users:add: the password on stdin; the user in the store, hashed, with its roles", async () => {
  // The framework's test app, which declares no roles: the project's own routes/_roles.ts is a
  // product's (one without "admin" refused this test's role before it reached the store).
  await using copy = await copyProject();
  await using store = await tempStore();
  const env = { KV_PATH: store.path };
  const made = await usersAdd(
    ["Admin@Example.com", "--role", "admin", "-r", "admin"],
    env,
    "piped secret 1\nignored\n",
    copy.root,
  );
  assert.equal(made.code, 0, made.stderr);
  assert.equal(made.stdout, "Created admin@example.com with the role admin.");

  const kv = await Deno.openKv(env.KV_PATH);
  try {
    const user = await findUser(kv, "admin@example.com");
    assert.deepEqual(user?.roles, ["admin"]);
    assert.ok(
      await verifyPassword("piped secret 1", user!.passwordHash),
      "the first line is the password",
    );
  } finally {
    kv.close();
  }

  const cases: [string[], string, number, RegExp][] = [
    [["admin@example.com"], "another secret\n", 1, /exists already/],
    [["not-an-email"], "long enough secret\n", 1, /email: That is not an email address\./],
    [["short@example.com"], "short\n", 1, /password: 8 characters at least\./],
    [["empty@example.com"], "", 1, /password: Enter your password\./],
    [[], "", 2, /^users:add: usage: deno task users:add <email>/],
    [["a@example.com", "b@example.com"], "", 2, /usage/],
    [["a@example.com", "--role", "two words"], "long enough secret\n", 2, /is not a role name/],
    [["a@example.com", "--bogus"], "long enough secret\n", 2, /Unknown option '--bogus'/],
  ];
  for (const [args, stdin, code, error] of cases) {
    const run = await usersAdd(args, env, stdin, copy.root);
    assert.equal(run.code, code, `${args.join(" ")}: ${run.stderr}`);
    assert.match(run.stderr, error, args.join(" "));
  }
});

Deno.test("users:add in an app that declares its roles (routes/_roles.ts) refuses another, before the password", async () => {
  // A copy of the framework's test app with a declaration of its own: the example's goes with it
  // (`deno task example:remove`), and this is the framework's test, not the example's.
  await using copy = await copyProject();
  await copy.write(
    "routes/_roles.ts",
    'import { defineRoles } from "shell/auth";\nexport default defineRoles(["admin"]);\n',
  );
  await using store = await tempStore();
  const env = { KV_PATH: store.path };
  // Before: a typo made a user no guard lets by.
  const run = await usersAdd(
    ["a@example.com", "--role", "admin,admn"],
    env,
    "long enough secret\n",
    copy.root,
  );
  assert.equal(run.code, 2, run.stderr);
  assert.match(
    run.stderr,
    /^users:add: --role: "admn" is not one of the app's roles; routes\/_roles\.ts declares "admin"$/,
  );
});

Deno.test("users:add in an app that declares no roles (the framework's test app): any role's name, as before", async () => {
  await using copy = await copyProject();
  await using store = await tempStore();
  const env = { KV_PATH: store.path };
  const made = await usersAdd(
    ["ops@example.com", "--role", "ops", "-r", "billing:read"],
    env,
    "long enough secret\n",
    copy.root,
  );
  assert.equal(made.code, 0, made.stderr);
  assert.equal(made.stdout, "Created ops@example.com with the roles ops, billing:read.");
});

Deno.test("users:add for an email whose deletion was cut short: says it is being deleted and how to finish it", async () => {
  await using store = await tempStore();
  const env = { KV_PATH: store.path };
  const kv = await Deno.openKv(env.KV_PATH);
  try {
    await createUser(kv, { email: "gone@example.com", password: "a long passphrase" });
    await assert.rejects(
      deleteUser(kv, "gone@example.com", {
        also: () => {
          throw new Error("the product's part failed");
        },
      }),
    );
  } finally {
    kv.close();
  }
  const run = await usersAdd(["gone@example.com"], env, "another long secret\n");
  assert.equal(run.code, 1, run.stderr);
  // Before: "An account with the email gone@example.com exists already", of an account gone to
  // every look-up.
  assert.match(run.stderr, /gone@example\.com is being deleted \(a deletion cut short\)/);
  assert.match(run.stderr, /Finish it as the product deletes accounts/);
  assert.match(run.stderr, /unfinishedDeletions\(kv\)/);
  assert.doesNotMatch(run.stderr, /exists already/);
});

Deno.test("users:add at a terminal: asked twice, never echoed", async () => {
  await using kvFile = await tempStore();
  const store = kvFile.path;
  // `script` gives the task a pseudo-terminal; what the terminal shows comes back on its stdout.
  const child = new Deno.Command("script", {
    args: ["-qfec", `${Deno.execPath()} task -q users:add tty@example.com`, "/dev/null"],
    cwd: PROJECT_ROOT,
    env: { KV_PATH: store },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let shown = "";
  const until = async (text: string) => {
    const deadline = Date.now() + 30_000;
    while (!shown.includes(text)) {
      if (Date.now() > deadline) throw new Error(`no "${text}" in ${JSON.stringify(shown)}`);
      const { value, done } = await reader.read();
      if (done) throw new Error(`ended before "${text}": ${JSON.stringify(shown)}`);
      shown += value;
    }
  };
  const type = (text: string) => writer.write(new TextEncoder().encode(text));
  await until("Password for tty@example.com: ");
  await type(`${PASSWORD}\r`);
  await until("The same again: ");
  await type(`${PASSWORD}\r`);
  await until("Created tty@example.com.");
  await writer.close();
  while (!(await reader.read()).done) { /* to the end */ }
  const { code } = await child.status;
  assert.equal(code, 0, shown);
  assert.ok(!shown.includes(PASSWORD), `the password was shown: ${JSON.stringify(shown)}`);

  const kv = await Deno.openKv(store);
  try {
    const user = await findUser(kv, "tty@example.com");
    assert.ok(user && await verifyPassword(PASSWORD, user.passwordHash));
  } finally {
    kv.close();
  }
});
