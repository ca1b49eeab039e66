/**
 * @module
 * `tests/setup.ts` decides what each folder of tests lacks, and says it in one line with the
 * command that gets it. (Installing is left to the real runs: it needs root.)
 */
import assert from "node:assert/strict";
import { chromiumPath, missingMessage, missingTools } from "./setup.ts";
import { tempDir } from "./helpers/temp_dir.ts";

const nothing = (path = "") => (name: string) =>
  name === "PATH" ? path : name === "CHROMIUM_PATH" ? "/nowhere/chromium" : undefined;

Deno.test("each folder's tools, and all of them when no folder is named", () => {
  const names = (folders: string[]) => missingTools(folders, nothing()).map((tool) => tool.name);
  assert.deepEqual(names(["tests/e2e"]), ["chromium"]);
  assert.deepEqual(names(["tests/reliability/"]), ["chromium", "wrk", "prlimit"]);
  assert.deepEqual(names(["tests/process"]), ["sqlite3", "setpriv"]);
  assert.deepEqual(names([]), ["chromium", "wrk", "prlimit", "sqlite3", "setpriv"]);
});

Deno.test("a product's folders are known by their names at any depth under tests/, and by what they hold", async () => {
  const names = (folders: string[]) => missingTools(folders, nothing()).map((tool) => tool.name);
  assert.deepEqual(names(["tests/clinic/e2e"]), ["chromium"]);
  assert.deepEqual(names(["tests/clinic/e2e/booking_test.ts"]), ["chromium"]);
  assert.deepEqual(names(["tests/clinic/billing/process/"]), ["sqlite3", "setpriv"]);
  assert.deepEqual(names(["tests/clinic/unit"]), []);
  // A folder named as a whole: what the folders in it need, as `deno test` runs them all.
  await using temp = await tempDir();
  const root = temp.path;
  await Deno.mkdir(`${root}/tests/clinic/booking/e2e`, { recursive: true });
  await Deno.mkdir(`${root}/tests/clinic/process`, { recursive: true });
  await Deno.mkdir(`${root}/tests/notes`, { recursive: true });
  assert.deepEqual(names([`${root}/tests/clinic`]), ["chromium", "sqlite3", "setpriv"]);
  assert.deepEqual(names([`${root}/tests/clinic/booking`]), ["chromium"]);
  assert.deepEqual(names([`${root}/tests/notes`]), []);
});

Deno.test("a folder named like a kind counts only under tests/", async () => {
  const names = (folders: string[]) => missingTools(folders, nothing()).map((tool) => tool.name);
  assert.deepEqual(names(["lib/process"]), []);
  assert.deepEqual(names(["examples/e2e/booking_test.ts"]), []);
  const root = await Deno.makeTempDir();
  await Deno.mkdir(`${root}/lib/process`, { recursive: true });
  await Deno.mkdir(`${root}/docs/reliability`, { recursive: true });
  await Deno.mkdir(`${root}/tests/e2e`, { recursive: true });
  assert.deepEqual(names([root]), ["chromium"]);
  assert.deepEqual(names([`${root}/lib`]), []);
  await Deno.remove(root, { recursive: true });
});

Deno.test("a tool on the PATH is found, if it is executable", async () => {
  await using temp = await tempDir();
  const dir = temp.path;
  await Deno.writeTextFile(`${dir}/wrk`, "#!/bin/sh\n", { mode: 0o755 });
  await Deno.writeTextFile(`${dir}/prlimit`, "not a program", { mode: 0o644 });
  const missing = missingTools(["tests/reliability"], nothing(`/nowhere:${dir}`));
  assert.deepEqual(missing.map((tool) => tool.name), ["chromium", "prlimit"]);
});

Deno.test("one line: what is missing and the command that installs it", () => {
  const env = (name: string) => name === "PATH" ? "" : undefined;
  const missing = missingTools(["tests/process"], env);
  const sudo = Deno.uid() === 0 ? "" : "sudo ";
  assert.equal(
    missingMessage(missing, env, true),
    `tests/setup.ts: missing sqlite3, setpriv; install with: ${sudo}apt-get install -y sqlite3 ` +
      "util-linux",
  );
  assert.ok(!missingMessage(missing, env, false).includes("\n"));
  assert.equal(chromiumPath(env), "/usr/bin/chromium");
});

Deno.test("a CHROMIUM_PATH that leads nowhere is said as such: no package can fix it", () => {
  const env = nothing();
  assert.equal(
    missingMessage(missingTools(["tests/e2e"], env), env, true),
    "tests/setup.ts: CHROMIUM_PATH=/nowhere/chromium is not an executable file: point it at " +
      "Chromium or unset it to use /usr/bin/chromium",
  );
});
