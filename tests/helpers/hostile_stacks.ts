/**
 * @module
 * A worker for `tests/dev_stack_test.ts`: reads, with the dev server's stack mapping
 * (`stackMapper`, which keeps the app's frames with `appStack`), the stacks a hostile page could
 * post —
 * a mebibyte each of what made the regular expressions before issue 22 backtrack — and posts
 * `"done"`. Run in a worker so that the test can give up on a parse that never ends.
 */
import { stackMapper } from "../../lib/dev/stack.ts";

const MIB = 1024 * 1024;

/** What each hostile stack is made of, repeated to a mebibyte. */
export const HOSTILE = [
  "http://" + "a".repeat(MIB), // a host with no `/_app/` after it
  "/_app/a?".repeat(MIB / 8), // queries that never end in `:line:column`
  "/_app/".repeat(MIB / 6), // paths that never end
  "    at " + "(".repeat(MIB), // a frame whose location never ends
  "    at " + "a:1".repeat(MIB / 3), // positions that never reach the end
];

self.onmessage = () => {
  const mapStack = stackMapper("/app", "_build/dev/static", new Map());
  for (const stack of HOSTILE) mapStack(stack);
  self.postMessage("done");
};
