/**
 * @module
 * An import that resolves to nothing stops the build with one line naming the file, line and
 * column — `Build failed: islands/Broken.tsx:1:25: Could not resolve "./nope.ts"` — and exit 1,
 * never esbuild's internal stack: in an island (esbuild's error) and in a route (Deno's graph), for
 * `deno task build` and `deno task start`. Under `deno task dev` the console gets the same line, at
 * the source's own column (not that of the code Fast Refresh's transform made), and the page the
 * source's line in its code frame. An island that reaches a server entry point (`"shell"`) gets a
 * line at that import saying to import from `"shell/runtime"`, which holds `httpError` for the
 * product's error catalogue that islands read.
 */
import assert from "node:assert/strict";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";

const BROKEN_ISLAND = `import { nothing } from "./nope.ts";
import { useState } from "react";

export default function Broken() {
  const [value] = useState(nothing);
  return <p>{String(value)}</p>;
}
`;

const BROKEN_ROUTE = `import { missing } from "@/components/missing.ts";

export default function Broken() {
  return <p>{missing}</p>;
}
`;

async function run(root: string, task: string): Promise<{ code: number; said: string }> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["task", task],
    cwd: root,
    env: { PORT: "0", HOSTNAME: "127.0.0.1", KV_PATH: ":memory:" },
    stdout: "null",
    stderr: "piped",
  }).output();
  return { code, said: new TextDecoder().decode(stderr) };
}

for (
  const [what, path, source, line] of [
    [
      "an island's",
      "islands/Broken.tsx",
      BROKEN_ISLAND,
      'Build failed: islands/Broken.tsx:1:25: Could not resolve "./nope.ts"',
    ],
    [
      "a route's",
      "routes/broken.tsx",
      BROKEN_ROUTE,
      'Build failed: routes/broken.tsx:1:25: Module not found "@/components/missing.ts"',
    ],
  ]
) {
  Deno.test(`${what} unresolved import: one line with file:line, exit 1, no stack`, async () => {
    await using project = await copyProject();
    await project.write(path, source);
    for (const task of ["build", "start"]) {
      const { code, said } = await run(project.root, task);
      assert.equal(code, 1, `${task}: ${said}`);
      assert.ok(said.split("\n").includes(line), `${task}: ${said}`);
      assert.doesNotMatch(said, /Uncaught|^\s+at |esbuild\/lib/m, `${task}: no stack`);
    }
  });
}

/** An island that shows a refusal of the product's error catalogue by its code. */
const CATALOGUE_ISLAND = `import { errors } from "@/components/refusals.ts";

const LOCKED = errors.locked().code;

export default function Refusal({ code }: { code?: string }) {
  return <p>{code === LOCKED ? "Locked: ask your manager" : "Refused"}</p>;
}
`;

const catalogue = (from: string) =>
  `import { httpError } from "${from}";

export const errors = {
  locked: () => httpError(409, "Submitted: counts cannot change", { code: "count_locked" }),
};
`;

Deno.test("an island reads the error catalogue: httpError from shell/runtime builds", async () => {
  await using project = await copyProject();
  await project.write("islands/Refusal.tsx", CATALOGUE_ISLAND);
  await project.write("components/refusals.ts", catalogue("shell/runtime"));
  const { code, said } = await run(project.root, "build");
  assert.equal(code, 0, said);
});

Deno.test("an island that reaches a server entry point: the import named, and what to import", async () => {
  await using project = await copyProject();
  await project.write("islands/Refusal.tsx", CATALOGUE_ISLAND);
  await project.write("components/refusals.ts", catalogue("shell"));
  for (const task of ["build", "start"]) {
    const { code, said } = await run(project.root, task);
    assert.equal(code, 1, `${task}: ${said}`);
    const line = said.split("\n").find((l) =>
      l.startsWith("Build failed: components/refusals.ts:1:27: ")
    );
    assert.ok(line, `${task}: ${said}`);
    assert.match(line, /"shell" is server code/);
    assert.match(line, /from "shell\/runtime" \(httpError/);
    assert.doesNotMatch(said, /node:worker_threads|Uncaught|^\s+at /m, `${task}: ${said}`);
  }
});

Deno.test("deno task dev: the same line, at the source's column; the page shows the source", async () => {
  await using project = await copyProject();
  await project.write("islands/Broken.tsx", BROKEN_ISLAND);
  await using server = await startServer({ NODE_ENV: "development" }, {
    root: project.root,
    script: "lib/cli/dev.ts",
  });
  const page = await (await server.fetch("/", { headers: { Accept: "text/html" } })).text();
  assert.ok(
    server.stderr.includes(
      'dev: Build failed: islands/Broken.tsx:1:25: Could not resolve "./nope.ts"',
    ),
    server.stderr.join("\n"),
  );
  assert.match(page, /Build failed/);
  assert.match(page, /islands\/Broken\.tsx:1:24:/); // esbuild's own frame counts from 0
  assert.ok(page.includes("1 │ import { nothing } from &quot;./nope.ts&quot;;"), page);
  assert.doesNotMatch(page, /RefreshSig/);
});
