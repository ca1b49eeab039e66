/**
 * @module
 * `deno task jobs [dead [NAME] [--limit N] | retry NAME ID | drop NAME ID]`: ops' hands on the jobs
 * that ran out of tries, on the store the settings name (`KV_PATH`, as for the server). `dead`
 * prints one JSON line each (`job`, `id`, `payload`, the last failure's `digest` and `failedAt`),
 * the digest to look up in the logs and Sentry, the first 50 (`--limit`) and, on stderr, how many
 * more there are; `retry` runs one again (same id, key and trace), once its cause is fixed; `drop`
 * forgets it. Exit 1 when the job named is not dead (retried or dropped already, past its week).
 */
import { parseArgs } from "node:util";
import { type DeadJob, deadJobs, dropDeadJob, retryDeadJob } from "../kv/jobs/dead.ts";
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

const USAGE = "usage: deno task jobs [dead [NAME] [--limit N] | retry NAME ID | drop NAME ID]";
/** How many dead jobs `dead` prints unless `--limit` says: each is up to 64 KiB, a week's kept. */
const LIMIT = 50;

function usage(): never {
  console.error(USAGE);
  Deno.exit(2);
}

/** The dead jobs after `after`, counted: how many more there are than `dead` printed. */
async function countAfter(kv: Deno.Kv, name: string | undefined, after: DeadJob): Promise<number> {
  let count = 0;
  for (let page = await deadJobs(kv, name, { after }); page.length > 0;) {
    count += page.length;
    page = await deadJobs(kv, name, { after: page.at(-1) });
  }
  return count;
}

const { values, positionals } = (() => {
  try {
    const options = { limit: { type: "string" } } as const;
    return parseArgs({ args: Deno.args, options, allowPositionals: true });
  } catch {
    usage();
  }
})();
const [command = "dead", name, id] = positionals;
const limit = values.limit === undefined ? LIMIT : Number(values.limit);
if (
  !["dead", "retry", "drop"].includes(command) || (command !== "dead" && id === undefined) ||
  (command !== "dead" && values.limit !== undefined) || !(Number.isInteger(limit) && limit >= 1)
) usage();
const kv = await storeOrExit(settingsOrExit().kvPath);
let code = 0;
if (command === "dead") {
  const shown = await deadJobs(kv, name, { limit });
  const text = shown.map((dead) => `${lineOf(dead)}\n`).join("");
  try {
    // Not console.log, which drops what a closed pipe refuses and goes on: read by `| head -1`,
    // the list stops there, quietly, with nothing more read or counted.
    await Deno.stdout.writable.getWriter().write(new TextEncoder().encode(text));
  } catch (error) {
    if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
    kv.close();
    Deno.exit(0);
  }
  const more = shown.length < limit ? 0 : await countAfter(kv, name, shown[limit - 1]);
  if (more > 0) {
    const whose = name === undefined ? "" : ` ${name}`;
    console.error(
      `${more} more dead jobs not shown: deno task jobs dead${whose} --limit ${limit + more}`,
    );
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
