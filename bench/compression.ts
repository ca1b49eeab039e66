/**
 * @module
 * What compression buys and costs, on one `deno task start` server: each example page's HTML
 * bytes on the wire as it is, gzipped and brotli'd (read with `node:http`, which leaves the body
 * encoded, unlike `fetch`); and throughput on `/list` asked as browsers ask (`gzip, deflate, br,
 * zstd`: gzip), with `br` only, and with nothing accepted, loaded in turn round after round — the
 * same server, so what differs is the compressing.
 */
import { request } from "node:http";
import { start } from "./process.ts";
import { fmt, median, type Row } from "./report.ts";
import { wrk, type WrkResult } from "./wrk.ts";

export interface CompressionOptions {
  root: string;
  seconds: number;
  connections: number;
  rounds: number;
  progress(message: string): void;
}

/** Pages whose bytes are counted: a long list, a page with an island, a form with its stream. */
const BYTE_PAGES = ["/list", "/counter", "/guestbook", "/"];
/** The page loaded for throughput (the largest of the SSR bench's). */
const LOAD_PAGE = "/list";

/** `/list` gzipped (what browsers get) at most this share of the page as it is. */
export const COMPRESSED_SHARE = 0.25;
/** Throughput gzipped at least this share of the same page as it is (loopback: CPU only). */
export const COMPRESSED_RPS = 0.8;

/** What each is asked with: browsers send `gzip, deflate, br, zstd`, and get gzip (a tie). */
const CODINGS = { identity: "identity", gzip: "gzip, deflate, br, zstd", br: "br" } as const;
type Coding = keyof typeof CODINGS;

export async function measureCompression(options: CompressionOptions) {
  const { root, seconds, connections, rounds, progress } = options;
  await using server = await start(root, ["task", "start"], {}, LOAD_PAGE);

  progress("compression: bytes on the wire");
  const bytes: Record<string, Record<Coding, number>> = {};
  for (const path of BYTE_PAGES) {
    bytes[path] = { identity: 0, gzip: 0, br: 0 };
    for (const coding of Object.keys(CODINGS) as Coding[]) {
      bytes[path][coding] = await wireBytes(server.origin + path, CODINGS[coding]);
    }
  }

  const load = { seconds, connections };
  const runs: Record<Coding, WrkResult[]> = { identity: [], gzip: [], br: [] };
  const order = Object.keys(CODINGS) as Coding[];
  for (const coding of order) {
    await wrk(server.origin + LOAD_PAGE, {
      ...load,
      headers: { "Accept-Encoding": CODINGS[coding] },
    });
  }
  for (let round = 0; round < 2 * rounds; round++) {
    progress(
      `compression: ${LOAD_PAGE} as it is, gzip, brotli in turn, round ${round + 1}/${2 * rounds}`,
    );
    for (const coding of round % 2 === 0 ? order : order.toReversed()) {
      runs[coding].push(
        await wrk(server.origin + LOAD_PAGE, {
          ...load,
          headers: { "Accept-Encoding": CODINGS[coding] },
        }),
      );
    }
  }
  await server.stop();

  const ratio = (coding: Coding) =>
    median(runs[coding].map((run, i) => run.rps / runs.identity[i].rps));
  const rps = (coding: Coding) => median(runs[coding].map((run) => run.rps));
  const p99 = (coding: Coding) => median(runs[coding].map((run) => run.p99Ms));
  const errors = Object.values(runs).flat().reduce((n, r) => n + r.socketErrors + r.non2xx3xx, 0);
  const share = bytes[LOAD_PAGE].gzip / bytes[LOAD_PAGE].identity;
  const rows: Row[] = [
    {
      measure: "Compression: HTML bytes on the wire, as it is → gzip → brotli",
      value: BYTE_PAGES.map((path) =>
        `${path} ${fmt.kb(bytes[path].identity)} → ${fmt.kb(bytes[path].gzip)} → ${
          fmt.kb(bytes[path].br)
        }`
      ).join("; "),
      target: `${LOAD_PAGE} gzip ≤ ${COMPRESSED_SHARE * 100}% of as it is`,
      pass: share <= COMPRESSED_SHARE,
    },
    {
      measure: `Compression: ${LOAD_PAGE} req/s, gzip / brotli vs as it is (p99)`,
      value: `${fmt.ratio(ratio("gzip"))} / ${fmt.ratio(ratio("br"))} (${fmt.rps(rps("gzip"))}, ${
        fmt.rps(rps("br"))
      } vs ${fmt.rps(rps("identity"))} req/s; p99 ${fmt.ms(p99("gzip"))}, ${fmt.ms(p99("br"))} vs ${
        fmt.ms(p99("identity"))
      })`,
      target: `gzip ≥ ${fmt.ratio(COMPRESSED_RPS)}`,
      pass: ratio("gzip") >= COMPRESSED_RPS && errors === 0,
    },
  ];
  return { rows, results: { bytes, runs, ratio: { br: ratio("br"), gzip: ratio("gzip") } } };
}

/** The body's length as it crossed the wire (encoded), for a request with `acceptEncoding`. */
function wireBytes(url: string, acceptEncoding: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { "Accept-Encoding": acceptEncoding } }, (res) => {
      let length = 0;
      res.on("data", (chunk: Uint8Array) => length += chunk.length);
      res.on("end", () => resolve(length));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}
