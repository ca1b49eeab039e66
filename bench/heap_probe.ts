/**
 * @module
 * Preloaded into a server by `bench/memory_spaces.ts` (`deno run --preload bench/heap_probe.ts`):
 * every 20 ms, the process's resident set (`/proc/self/statm`); at each new maximum, V8's own
 * figures of that moment (`v8.getHeapSpaceStatistics()`, `getHeapStatistics()`) written to the
 * file `PROBE_OUT` names, so that the peak seen from outside can be split into V8's spaces. Started
 * on `load`: a preloaded module's own timers would otherwise hold the main module back.
 */
import v8 from "node:v8";

const out = Deno.env.get("PROBE_OUT");
if (!out) throw new Error("bench/heap_probe.ts: PROBE_OUT names no file");
const MB = 2 ** 20;
const mb = (bytes: number) => Math.round(bytes / MB * 100) / 100;

addEventListener("load", () => {
  const statm = Deno.openSync("/proc/self/statm");
  const buffer = new Uint8Array(256);
  let peak = 0;
  setInterval(() => {
    statm.seekSync(0, Deno.SeekMode.Start);
    const read = statm.readSync(buffer) ?? 0;
    const pages = Number(new TextDecoder().decode(buffer.subarray(0, read)).split(" ")[1]);
    const rss = pages * 4096 / MB;
    if (rss <= peak) return;
    peak = rss;
    const heap = v8.getHeapStatistics();
    // Written aside, then renamed: the bench may read it at any moment.
    Deno.writeTextFileSync(
      `${out}.next`,
      JSON.stringify({
        rss: mb(rss * MB),
        spaces: Object.fromEntries(
          v8.getHeapSpaceStatistics().map((s) => [s.space_name, {
            committed: mb(s.physical_space_size),
            used: mb(s.space_used_size),
          }]),
        ),
        heapCommitted: mb(heap.total_physical_size),
        heapUsed: mb(heap.used_heap_size),
        external: mb(heap.external_memory),
        mallocedPeak: mb(heap.peak_malloced_memory),
      }),
    );
    Deno.renameSync(`${out}.next`, out);
  }, 20);
});
