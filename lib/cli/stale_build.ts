/**
 * @module
 * Whether the last build is stale (`build/fingerprint.ts`), asked of a process of its own that
 * ends with the answer. The check runs once, at start-up, but what it takes would stay with the
 * server for as long as it serves: its modules (the fingerprint, the build's graph and salt,
 * `node:fs`, `node:crypto`) in the heap, V8 never unloading a module, and what running it touched.
 * It ran in a worker before, whose modules went with its isolate, yet the server still peaked some
 * 5 MB higher under load than one that never checked (the code a second isolate and the check run,
 * and the pages its heap was made of, stay mapped: `docs/performance.md`, "the staleness check
 * apart"). A child process takes as long to answer (about 60 ms either way) and leaves nothing.
 * What the check throws is thrown again here as it was (name, message, stack, `code`): a start-up
 * that fails says what failed, not that a child did.
 */
import { fileURLToPath } from "node:url";

/** What the check threw, as a child can write it (an `Error` arrives without its `code`). */
export interface CheckError {
  name: string;
  message: string;
  stack?: string;
  /** A system error's (`EISDIR`, `EACCES`, ...). */
  code?: string;
}

/** What the child (`stale_build_check.ts`) answers. */
export type StaleAnswer = { stale: boolean } | { error: CheckError };

/** How the line of stdout that holds the answer begins. */
export const ANSWER = "stale-build-answer ";

// A path, not a URL's `pathname`: a project folder with a space in its name is percent-encoded
// there.
const CHECK = fileURLToPath(new URL("./stale_build_check.ts", import.meta.url));

/** `isStale(root, dev)` of `build/fingerprint.ts`, in a process that is gone once it answers. */
export async function isStaleApart(root: string, dev: boolean): Promise<boolean> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-env", CHECK, root, dev ? "dev" : "prod"],
    stdin: "null",
  }).output();
  // Its answer is the line that says so: what else may reach stdout (V8's own traces, when
  // DENO_V8_FLAGS asks for them) is not.
  const line = new TextDecoder().decode(stdout).split("\n").find((l) => l.startsWith(ANSWER));
  if (code !== 0 || !line) {
    throw new Error(
      `the build's staleness check exited with code ${code}: ${new TextDecoder().decode(stderr)}`,
    );
  }
  const answer: StaleAnswer = JSON.parse(line.slice(ANSWER.length));
  if ("error" in answer) throw thrownAgain(answer.error);
  return answer.stale;
}

function thrownAgain({ name, message, stack, code }: CheckError): Error {
  const error = new Error(message);
  error.name = name;
  // The child's stack: where the check failed, not where its answer arrived.
  if (stack) error.stack = stack;
  if (code) Object.assign(error, { code });
  return error;
}
