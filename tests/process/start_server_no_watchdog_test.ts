/**
 * @module
 * `startServer` whose watchdog cannot be started (no `sh` on the PATH) throws, and leaves nothing
 * of the server it had already spawned: its process group is ended before the error is thrown.
 * The start runs in a process of its own whose PATH holds no `sh`; the server gets the full PATH.
 */
import assert from "node:assert/strict";
import { builtFixture } from "../helpers/built_copy.ts";
import { tempDir } from "../helpers/temp_dir.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;
const STARTER = `import { startServer } from "${
  new URL("../../lib/testing.ts", import.meta.url).href
}";
try {
  await startServer({
    root: Deno.env.get("ROOT"),
    env: { PATH: Deno.env.get("SERVER_PATH"), MARK: Deno.env.get("MARK") },
  });
  console.log("started");
} catch (error) {
  console.log(error.name);
}
Deno.exit(0);
`;

/** The live processes whose environment holds `mark`. */
async function marked(mark: string): Promise<number[]> {
  const found: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const environ = await Deno.readTextFile(`/proc/${entry.name}/environ`).catch(() => "");
    if (environ.split("\0").includes(`MARK=${mark}`)) found.push(Number(entry.name));
  }
  return found;
}

Deno.test("a watchdog that cannot start: startServer throws and its server is ended", async () => {
  await using dir = await tempDir("no-sh-");
  await Deno.writeTextFile(`${dir.path}/starter.ts`, STARTER);
  const mark = crypto.randomUUID();
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, `${dir.path}/starter.ts`],
    env: {
      PATH: dir.path,
      SERVER_PATH: Deno.env.get("PATH") ?? "",
      ROOT: await builtFixture(),
      MARK: mark,
      NODE_ENV: "production",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  assert.equal(new TextDecoder().decode(stdout).trim(), "NotFound", "no sh: the start throws");
  const left = await marked(mark);
  for (const pid of left) Deno.kill(pid, "SIGKILL");
  assert.deepEqual(left, [], "nothing of the server is left");
});
