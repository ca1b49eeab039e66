/**
 * @module
 * A watchdog for a server's process group: a small shell of its own that waits for the test
 * process to be gone, however it ended, then ends the group (SIGTERM, SIGKILL after a grace) and
 * removes the folder given. The server runs in a group of its own so that a stop reaches every
 * process it started, which also keeps the signals that end a test run (Ctrl-C, SIGTERM) from
 * reaching it; and `deno test` exits on SIGINT before a signal listener of the test's own could run.
 * So the watchdog does not listen for signals: it reads a pipe only the test process holds, which
 * ends when that process does. Test-only.
 */

/** Seconds from the SIGTERM to the SIGKILL, in steps of 0.2 s. */
const GRACE_STEPS = 25;

// $1: the group; $2: a folder to remove once it is gone, or "". The read returns at the pipe's end.
const SCRIPT = `read -r _
kill -TERM "-$1" 2>/dev/null
i=0
while [ "$i" -lt ${GRACE_STEPS} ] && kill -0 "-$1" 2>/dev/null; do sleep 0.2; i=$((i + 1)); done
kill -KILL "-$1" 2>/dev/null
[ -z "$2" ] || rm -rf -- "$2"
`;

/** Watches process group `pgid` for the test process; dispose of it once the group is ended. */
export function watchGroup(pgid: number, folder = ""): AsyncDisposable {
  const watchdog = new Deno.Command("sh", {
    args: ["-c", SCRIPT, "watchdog", String(pgid), folder],
    stdin: "piped",
    stdout: "null",
    stderr: "null",
    // A session of its own: the Ctrl-C that ends the test run does not end it too.
    detached: true,
  }).spawn();
  return {
    async [Symbol.asyncDispose]() {
      watchdog.kill("SIGKILL");
      await watchdog.status;
      await watchdog.stdin.close().catch(() => {});
    },
  };
}
