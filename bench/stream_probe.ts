/**
 * @module
 * Preloaded into a server by `bench/stream_memory.ts`: on SIGUSR2, collects garbage (the server
 * runs with `--expose-gc`) and writes `Deno.memoryUsage()` to the file `PROBE_OUT` names; with
 * `PROBE_SNAPSHOTS` set, a V8 heap snapshot beside it too (`PROBE_OUT.N.heapsnapshot`), for
 * finding what the difference is made of.
 */
import v8 from "node:v8";

const out = Deno.env.get("PROBE_OUT");
if (!out) throw new Error("bench/stream_probe.ts: PROBE_OUT names no file");
const snapshots = Deno.env.get("PROBE_SNAPSHOTS") === "1";
const gc = (globalThis as unknown as { gc?: () => void }).gc;
if (!gc) throw new Error("bench/stream_probe.ts: the server runs without --expose-gc");
let taken = 0;

// Listened to on `load`: the server's main module is loaded first.
addEventListener("load", () => {
  Deno.addSignalListener("SIGUSR2", () => {
    for (let i = 0; i < 4; i++) gc();
    if (snapshots) v8.writeHeapSnapshot(`${out}.${taken++}.heapsnapshot`);
    Deno.writeTextFileSync(`${out}.next`, JSON.stringify(Deno.memoryUsage()));
    Deno.renameSync(`${out}.next`, out);
  });
});
