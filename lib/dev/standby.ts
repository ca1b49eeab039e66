/**
 * @module
 * The app's server under `deno task dev` starts ahead of need: it loads the framework, then waits
 * on stdin for the dev server's word that the build it is to serve is written - so a restart
 * costs loading the app's own modules, not a whole process. The end of stdin means the dev server
 * is gone (killed, say): the server goes too, rather than hold its port and memory.
 */

export async function standBy(): Promise<void> {
  const reader = Deno.stdin.readable.getReader();
  if ((await reader.read()).done) Deno.exit(0);
  (async () => {
    while (!(await reader.read()).done);
    Deno.exit(0);
  })();
}
