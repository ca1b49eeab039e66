/**
 * @module
 * What `deno task test:unit` and `test:e2e` pick up (deno.json): a product's tests in folders of
 * its own (`tests/loans/`, `tests/loans/e2e/`) as well as the framework's and the example's, with
 * every `e2e/` and `process/` folder, `tests/reliability/` and the test app left to the task they
 * belong to. Each task's `deno test` arguments, as deno.json has them, run on a tree of stub tests.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { PROJECT_ROOT } from "../helpers/project_copy.ts";

/** The arguments after `deno test` in a task's command, its quotes removed (one word each). */
async function testArgs(task: string): Promise<string[]> {
  const { tasks } = JSON.parse(await Deno.readTextFile(join(PROJECT_ROOT, "deno.json")));
  const command: string = tasks[task].command;
  const words = command.slice(command.lastIndexOf("deno test ") + "deno test ".length).split(" ");
  return words.map((word) => word.replaceAll("'", ""));
}

const STUBS = [
  "tests/app_test.ts",
  "tests/e2e/pages_test.ts",
  "tests/e2e/clinic/reception_test.ts",
  "tests/process/serve_test.ts",
  "tests/reliability/load_test.ts",
  "tests/fixture/routes/fixture_test.ts",
  "tests/example/guestbook_test.ts",
  "tests/example/e2e/board_test.ts",
  "tests/example/process/limit_test.ts",
  "tests/loans/loans_test.ts",
  "tests/loans/rules_test.tsx",
  "tests/loans/e2e/desk_test.tsx",
  "tests/loans/process/trace_test.ts",
];

/** The stub files a task's `deno test` arguments run, in a tree of `STUBS`. */
async function ran(task: string): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "test-tasks-" });
  try {
    await Deno.writeTextFile(join(dir, "deno.json"), "{}");
    for (const file of STUBS) {
      await Deno.mkdir(join(dir, file, ".."), { recursive: true });
      await Deno.writeTextFile(join(dir, file), `Deno.test(${JSON.stringify(file)}, () => {});\n`);
    }
    const args = (await testArgs(task)).filter((arg) => arg !== "-A");
    const { stdout, success } = await new Deno.Command(Deno.execPath(), {
      args: ["test", "-A", ...args.filter((arg) => arg !== "--deny-run")],
      cwd: dir,
      env: { NO_COLOR: "1" },
      stderr: "null",
    }).output();
    assert.ok(success, `deno test ${args.join(" ")} failed`);
    // Each stub's test is named after its file: `--parallel` prints `./file => name ... ok`.
    const lines = new TextDecoder().decode(stdout).split("\n");
    return lines.flatMap((line) => /=> (\S+) \.\.\. ok/.exec(line)?.[1] ?? []).toSorted();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("test:unit runs every in-process test, a product's own folders included", async () => {
  assert.deepEqual(await ran("test:unit"), [
    "tests/app_test.ts",
    "tests/example/guestbook_test.ts",
    "tests/loans/loans_test.ts",
    "tests/loans/rules_test.tsx",
  ]);
});

Deno.test("test:e2e runs every e2e/ folder's tests, a product's own included", async () => {
  // adopt9's tests/e2e/clinic/ ran in neither task: test:unit leaves e2e/ folders out, and
  // test:e2e took only the files directly in one.
  assert.deepEqual(await ran("test:e2e"), [
    "tests/e2e/clinic/reception_test.ts",
    "tests/e2e/pages_test.ts",
    "tests/example/e2e/board_test.ts",
    "tests/loans/e2e/desk_test.tsx",
  ]);
});
