/**
 * @module
 * `deno task jobs [dead [NAME] | retry NAME ID | drop NAME ID]`: ops' hands on the jobs that ran out
 * of tries, on the store the settings name (`KV_PATH`, as for the server). `dead` prints one JSON
 * line each (`job`, `id`, `payload`, the last failure's `digest` and `failedAt`), the digest to look
 * up in the logs and Sentry; `retry` runs one again (same id), once its cause is fixed; `drop`
 * forgets it. Exit 1 when the job named is not dead (retried or dropped already, past its week).
 */
import { type DeadJob, deadJobs, dropDeadJob, retryDeadJob } from "../kv/jobs.ts";
import { settingsOrExit } from "./settings.ts";
import { storeOrExit } from "./store.ts";

/**
 * A dead job as one JSON line. KV keeps what JSON has no form for: a payload with a BigInt, a
 * cycle or thousands of levels threw mid-list, and the jobs after it were never shown. BigInts as
 * `12n`, Maps and Sets as their entries, typed arrays as their bytes; anything else JSON cannot
 * hold is shown as Deno prints it, a string.
 */
function lineOf(dead: DeadJob): string {
  try {
    return JSON.stringify(
      dead,
      (_key, value: unknown) =>
        typeof value === "bigint"
          ? `${value}n`
          : value instanceof Map || value instanceof Set
          ? [...value]
          : ArrayBuffer.isView(value)
          ? Array.from(new Uint8Array(value.buffer, value.byteOffset, value.byteLength))
          : value,
    );
  } catch {
    return JSON.stringify({ ...dead, payload: Deno.inspect(dead.payload) });
  }
}

const USAGE = "usage: deno task jobs [dead [NAME] | retry NAME ID | drop NAME ID]";
const [command = "dead", name, id] = Deno.args;
if (!["dead", "retry", "drop"].includes(command) || (command !== "dead" && id === undefined)) {
  console.error(USAGE);
  Deno.exit(2);
}
const kv = await storeOrExit(settingsOrExit().kvPath);
let code = 0;
if (command === "dead") {
  let page = await deadJobs(kv, name);
  while (page.length > 0) {
    for (const dead of page) console.log(lineOf(dead));
    page = await deadJobs(kv, name, { after: page.at(-1) });
  }
} else {
  const done = await (command === "retry" ? retryDeadJob : dropDeadJob)(kv, name, id);
  console.log(
    done
      ? `${command === "retry" ? "Enqueued again" : "Dropped"}: ${name} ${id}`
      : `No dead job ${name} ${id} (retried or dropped already, or kept past its week)`,
  );
  code = done ? 0 : 1;
}
kv.close();
Deno.exit(code);
