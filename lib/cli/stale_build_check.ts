/**
 * @module
 * The process `stale_build.ts` starts: `deno run stale_build_check.ts <root> <prod|dev>` writes
 * one line to stdout, `ANSWER` and then the JSON of `{ stale }`, or `{ error }` (the thrown error's
 * name, message, stack and system code, for `stale_build.ts` to throw again as it was), and exits
 * 0.
 */
import { isStale } from "../build/fingerprint.ts";
import { ANSWER, type StaleAnswer } from "./stale_build.ts";

const [root, mode] = Deno.args;
let answer: StaleAnswer;
try {
  answer = { stale: await isStale(root, mode === "dev") };
} catch (error) {
  const { name, message, stack, code } = error instanceof Error
    ? error as Error & { code?: unknown }
    : { name: "Error", message: String(error), stack: undefined, code: undefined };
  answer = { error: { name, message, stack, code: typeof code === "string" ? code : undefined } };
}
console.log(ANSWER + JSON.stringify(answer));
