/**
 * @module
 * What a team does first never fights the framework's tests. On two copies of the project (its
 * files as git sees them, a clean clone's), one after the other:
 * - a team's first day — a root `_middleware.ts`, a new server action and an island calling it, an
 *   island importing an npm package (valibot), another `_app.tsx` and `_layout.tsx`, a
 *   `components/` folder, its own home page — then `.ci/run` (`deno task check` and the whole
 *   `deno task test`, the example's tests included while the project has them): green;
 * - a clean start — `deno task example:remove`, then the files docs/start.md has a team add (the
 *   README's tour and the first test, taken from the docs) and roles of its own, without the
 *   example's `admin` — then `.ci/run`: green, the docs' test among those that passed. A framework
 *   test that leans on the example's roles (users:add's did, with `--role admin` on the project's
 *   own routes) fails here.
 *
 * Both are about the shell's clone, whose example is still there (`tests/example/files.json`). A
 * product's clone, its example removed as docs/start.md says, is past its first day: the first
 * day's files would go over the product's own (`_app.tsx`, `_layout.tsx`, the root
 * `_middleware.ts`, its home page) and the docs' first test would meet its required settings, so
 * its own tests failed there, and its `deno task test` was never green. There the test is ignored:
 * the product's own run of the suite, the framework's tests beside its changes, is that proof.
 *
 * The nested runs carry `NESTED_SUITE=1`, under which this file's test is ignored: no recursion.
 * Each runs the whole suite once, so this test takes about twice as long as the rest of the suite:
 * the longest by far, and worth it — it is the one proof that a product's changes cannot break the
 * framework's tests. `deno task test` runs it alone, after the rest, and runs the two copies one
 * after the other: a suite's timing-sensitive tests (live updates within a second, latencies side
 * by side, the dev server's reloads) are as reliable there as in a run of their own, where three
 * suites at once on two cores made them flaky.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { docFiles, typescriptBlocks } from "../helpers/doc_blocks.ts";
import { PROJECT_ROOT } from "../helpers/project_copy.ts";

/** A team's first day, as files written over a copy of the project. */
const DAY_ONE: Record<string, string> = {
  "routes/_middleware.ts": `import type { Middleware } from "shell";

/** Every page and action: the team's header, and a value for pages and actions. */
export const handler: Middleware = async (c, next) => {
  c.set("team", "day-one");
  await next();
  c.header("X-Team", "day-one");
};
`,
  "components/Badge.tsx": `export function Badge({ label }: { label: string }) {
  return <strong className="badge">{label}</strong>;
}
`,
  "routes/_team/actions.ts": `"use server";
import * as v from "valibot";
import { requestContext } from "shell";

const Name = v.pipe(v.string(), v.trim(), v.minLength(1));

export async function greet(name: string): Promise<string> {
  const parsed = v.parse(Name, name);
  return await Promise.resolve(\`Hello, \${parsed}, from \${requestContext().get("team")}\`);
}
`,
  "islands/Greeter.tsx": `import { useState } from "react";
import * as v from "valibot";
import { Badge } from "../components/Badge.tsx";
import { greet } from "../routes/_team/actions.ts";

const Name = v.pipe(v.string(), v.minLength(1));

export default function Greeter() {
  const [said, setSaid] = useState("");
  return (
    <p>
      <Badge label="team" />
      <button type="button" onClick={async () => v.is(Name, "Ada") && setSaid(await greet("Ada"))}>
        Greet
      </button>
      <output>{said}</output>
    </p>
  );
}
`,
  "routes/index.tsx": `import Greeter from "../islands/Greeter.tsx";
import { Badge } from "../components/Badge.tsx";

export default function Home() {
  return (
    <>
      <title>Our product</title>
      <h1>
        Our product <Badge label="beta" />
      </h1>
      <Greeter />
    </>
  );
}
`,
  "routes/_app.tsx": `import type { AppProps } from "shell";

export default function App({ Component }: AppProps) {
  return (
    <html lang="fr">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width" />
        <meta name="theme-color" content="#000000" />
      </head>
      <body className="product">
        <Component />
      </body>
    </html>
  );
}
`,
  "routes/_layout.tsx": `import type { LayoutProps } from "shell";
import { Badge } from "../components/Badge.tsx";

export default function Layout({ Component }: LayoutProps) {
  return (
    <div className="shell">
      <nav>
        <a href="/">Our product</a> <Badge label="nav" />
      </nav>
      <Component />
      <footer>© the team</footer>
    </div>
  );
}
`,
};

/** A product's roles, in a clean start: its own, and not the example's `admin`. */
const PRODUCT_ROLES = `import { defineRoles } from "shell/auth";

export default defineRoles(["editor"]);
`;

Deno.test({
  name: "a team's first day, and a clean start, leave .ci/run green",
  // The nested runs are this test's own: there it does not run again. A product's clone has no
  // example left, and no first day to simulate over its own files (above).
  ignore: Deno.env.get("NESTED_SUITE") === "1" || !await isShellClone(PROJECT_ROOT),
  async fn(t) {
    await t.step("a team's first day: .ci/run is green", async () => {
      await using copy = await copyOfProject("day-one");
      for (const [path, source] of Object.entries(DAY_ONE)) await copy.write(path, source);
      // Formatted as the team's editor would, `deno fmt`.
      const fmt = await run(copy.root, ["fmt", ...Object.keys(DAY_ONE)]);
      assert.equal(fmt.code, 0, fmt.output);

      const { passed, failed, code, output, tail } = await ciRun(copy.root);
      assert.equal(code, 0, tail);
      assert.equal(failed, 0, tail);
      // The whole suite ran: the framework's tests, and the example's.
      assert.ok(passed > 200, `only ${passed} passed:\n${tail}`);
      assert.match(output, /tests\/example\/app_test\.ts => /);
      assert.match(output, /tests\/e2e\/live_pages_test\.ts => /);
    });

    await t.step(
      "a clean start: the example removed, the docs' first steps, .ci/run green",
      async () => {
        await using copy = await copyOfProject("clean-start");
        const removed = await run(copy.root, ["task", "example:remove"]);
        assert.equal(removed.code, 0, removed.output);
        for (const gone of ["routes/guestbook.tsx", "islands/Counter.tsx", "tests/example"]) {
          assert.ok(!await exists(join(copy.root, gone)), `${gone} is gone`);
        }
        // Its stylesheets went too, and deno.json maps none that is gone: only stylesheets still
        // there (a product's own, in a product's clone) keep their entries.
        const { imports } = JSON.parse(await Deno.readTextFile(join(copy.root, "deno.json")));
        const stale = [];
        for (const key of Object.keys(imports).filter((key) => key.endsWith(".css"))) {
          if (!await exists(join(copy.root, key))) stale.push(key);
        }
        assert.deepEqual(stale, []);
        assert.ok("shell/testing" in imports, "the rest of deno.json stays");
        // What docs/start.md has a team add: the README's tour and the first test, as shown.
        const added = await startFiles();
        assert.ok("tests/notes_test.ts" in added, `the docs' files: ${Object.keys(added)}`);
        for (const [path, source] of Object.entries(added)) await copy.write(path, source);
        await copy.write("routes/_roles.ts", PRODUCT_ROLES);

        const { passed, failed, code, output, tail } = await ciRun(copy.root);
        assert.equal(code, 0, tail);
        assert.equal(failed, 0, tail);
        assert.match(output, /tests\/notes_test\.ts => a note posted without JavaScript .* ok/);
        assert.doesNotMatch(output, /tests\/example\//);
        assert.ok(passed > 150, `only ${passed} passed:\n${tail}`);
        // The suite ran under the product's roles: the app refuses the example's.
        const admin = await run(copy.root, [
          "task",
          "-q",
          "users:add",
          "a@example.com",
          "-r",
          "admin",
        ]);
        assert.equal(admin.code, 2, admin.output);
        assert.match(
          admin.stderr.trim(),
          /"admin" is not one of the app's roles; .* declares "editor"$/,
        );
      },
    );
  },
});

/** The files docs/start.md has a team write: every block the README and it show at a path. */
async function startFiles(): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const doc of (await docFiles()).filter((doc) => /README\.md|start\.md/.test(doc))) {
    const text = await Deno.readTextFile(join(PROJECT_ROOT, doc));
    for (const block of typescriptBlocks(doc, text)) {
      if (!block.path.startsWith("_doc_")) files[block.path] = block.code;
    }
  }
  return files;
}

interface CiResult {
  code: number;
  passed: number;
  failed: number;
  /** The run's whole output. */
  output: string;
  /** Its last lines: enough to see what failed. */
  tail: string;
}

/** `.ci/run` in `root`: check and the whole suite, its `N passed, N failed` read back. */
async function ciRun(root: string): Promise<CiResult> {
  const { code, stdout, stderr } = await run(root, [], ["bash", ".ci/run"]);
  // What a reader needs when it failed: deno test's own summary of the failures, the check's
  // verdict, the last words on stderr.
  const failures = stdout.slice(Math.max(0, stdout.lastIndexOf(" ERRORS ")));
  const verdicts = stdout.split("\n").filter((line) => /failed|passed/.test(line)).slice(-5);
  const tail = [failures.slice(0, 20_000), ...verdicts, stderr.split("\n").slice(-40).join("\n")]
    .join("\n");
  const summary = [...stdout.matchAll(/^(\d+) passed, (\d+) failed$/gm)].at(-1);
  assert.ok(summary, `no summary line:\n${tail}`);
  const output = stdout + stderr;
  return { code, passed: Number(summary[1]), failed: Number(summary[2]), output, tail };
}

async function run(
  cwd: string,
  args: string[],
  command = [Deno.execPath()],
): Promise<{ code: number; output: string; stdout: string; stderr: string }> {
  const [program, ...before] = command;
  const path = `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? ""}`;
  const { code, stdout, stderr } = await new Deno.Command(program, {
    args: [...before, ...args],
    cwd,
    env: { NESTED_SUITE: "1", CI: "true", NO_COLOR: "1", PATH: path },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  const [out, err] = [decoder.decode(stdout), decoder.decode(stderr)];
  return { code, output: out + err, stdout: out, stderr: err };
}

interface Copy extends AsyncDisposable {
  root: string;
  write(path: string, contents: string): Promise<void>;
}

/**
 * A copy of the project as a clean clone has it: the files git tracks or would (`.gitignore`
 * respected: no `_build/`, no `.data/`), `node_modules` linked.
 */
async function copyOfProject(name: string): Promise<Copy> {
  const root = await Deno.makeTempDir({ prefix: `app-project-${name}-` });
  const { stdout, success } = await new Deno.Command("git", {
    args: ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    cwd: PROJECT_ROOT,
  }).output();
  assert.ok(success, "git ls-files failed");
  const files = new TextDecoder().decode(stdout).split("\0").filter(Boolean);
  for (const file of files) {
    if (!await exists(join(PROJECT_ROOT, file))) continue; // deleted, not yet committed
    await Deno.mkdir(dirname(join(root, file)), { recursive: true });
    await Deno.copyFile(join(PROJECT_ROOT, file), join(root, file));
  }
  await Deno.symlink(join(PROJECT_ROOT, "node_modules"), join(root, "node_modules"));
  return {
    root,
    async write(path, contents) {
      await Deno.mkdir(dirname(join(root, path)), { recursive: true });
      await Deno.writeTextFile(join(root, path), contents);
    },
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

/** Whether `root` is the shell's clone, its example still there, rather than a product's. */
async function isShellClone(root: string): Promise<boolean> {
  return await exists(join(root, "tests/example/files.json"));
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}
