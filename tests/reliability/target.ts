/**
 * @module
 * What the findings tests (`tests/reliability/findings_*_test.ts`, issue 11) run against: the
 * framework's test app, or the project at `FINDINGS_ROOT` — a worktree of an older commit, built —
 * to show that each test fails on the code from before its fix. They speak only HTTP (and TCP) to a real server
 * process, so they hold for any version with the same HTTP surface.
 *
 *     git worktree add /tmp/old 7bfd8d2 && (cd /tmp/old && deno task build)
 *     FINDINGS_ROOT=/tmp/old NODE_ENV=production deno test -A tests/reliability/findings_*_test.ts
 *
 * Also raw HTTP/1.1 exchanges with a time bound, for requests that stall on purpose.
 */
import { join } from "node:path";
import { builtCopy, builtFixture } from "../helpers/built_copy.ts";
import { type StartOptions, startServer, type TestServer } from "../helpers/server.ts";

/** The older tree to run against, if any: copies and servers are the test app's otherwise. */
const FINDINGS_ROOT = Deno.env.get("FINDINGS_ROOT");

/** The root of the target itself, built: the tree at `FINDINGS_ROOT`, or the built test app. */
export async function targetRoot(): Promise<string> {
  return FINDINGS_ROOT ?? await builtFixture();
}

export interface Target {
  root: string;
  /** The action ids of its build, by export name. */
  actionIds(): Promise<Record<string, string>>;
  /**
   * The key that signs the form-state cookie of a server of it whose KV store is the file
   * `kvPath`: kept there once made (issue 28); the build's own in older trees.
   */
  secret(kvPath: string): Promise<string>;
}

/**
 * The target with `files` added (path → contents; a `Uint8Array` as bytes), built, and shared by
 * every test asking for the same files (`built_copy.ts`): tests only serve it, never edit it.
 */
export async function builtTarget(
  files: Record<string, string | Uint8Array> = {},
): Promise<Target> {
  const root = await builtCopy("findings", files, { from: FINDINGS_ROOT });
  const manifest = () => Deno.readTextFile(join(root, "_build/manifest.gen.ts"));
  return {
    root,
    async actionIds() {
      const ids: Record<string, string> = {};
      for (
        const [, id, name] of (await manifest()).matchAll(/\{ id: "([^"]+)", name: "([^"]+)"/g)
      ) {
        ids[name] = id;
      }
      return ids;
    },
    async secret(kvPath) {
      using kv = await Deno.openKv(kvPath);
      const kept = await kv.get<string>(["_app", "secret", "form_state"]);
      if (typeof kept.value === "string") return kept.value;
      const secret = /secret: "([^"]+)"/.exec(await manifest())?.[1];
      if (!secret) throw new Error("no actions secret in the copy's manifest");
      return secret;
    },
  };
}

/**
 * `startServer`, disposed within 10 s: SIGTERM, then SIGKILL. A graceful shutdown waits for the
 * requests in flight, and on the code from before the fixes some never end.
 */
export async function startTarget(
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<TestServer> {
  const server = await startServer(env, { root: await targetRoot(), ...options });
  return {
    ...server,
    async [Symbol.asyncDispose]() {
      const timer = setTimeout(() => server.kill(), 10_000);
      try {
        await server.stop();
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export interface Exchange {
  /** 0 when nothing (or no complete head) came back before the connection ended or time ran out. */
  status: number;
  headers: Headers;
  /** The body bytes received, raw (chunked framing left in). */
  body: Uint8Array;
  /** Milliseconds from the first byte sent to the end of the head (or to giving up). */
  ms: number;
  /** The server closed the connection (as opposed to the time running out). */
  closed: boolean;
  /** All of the request's body was written: the server kept reading it. */
  bodySent: boolean;
}

export interface ExchangeOptions {
  /** Give up after this long, in ms: a "did not hang" bound, never a performance claim. */
  timeoutMs: number;
  /** Resolve as soon as the head is in, without waiting for the body or the close. */
  headOnly?: boolean;
  /** Sent after `head`, as it goes, without waiting for it to be read. */
  body?: Uint8Array | AsyncIterable<Uint8Array>;
  /** After the answer, wait (within `timeoutMs`) until all of `body` is written. */
  waitForBody?: boolean;
  /** Keep the connection open after the answer (for tests that hold many). */
  keepOpen?: (conn: Deno.Conn) => void;
  /** Stop waiting for an answer when it aborts, as when time runs out. */
  signal?: AbortSignal;
}

/**
 * Sends `head` (a request line and headers, `\r\n`-terminated, blank line included), then `body`,
 * and reads what comes back until the server closes, the head is in (`headOnly`), or time runs
 * out. Writing and reading run side by side: a server may answer before the body is all sent.
 */
export async function exchange(
  port: number,
  head: string,
  options: ExchangeOptions,
): Promise<Exchange> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const began = performance.now();
  const received: Uint8Array[] = [];
  let size = 0;
  let headEnd = -1;
  let closed = false;
  let bodySent = false;
  const writing = (async () => {
    try {
      await writeAll(conn, new TextEncoder().encode(head));
      if (options.body instanceof Uint8Array) await writeAll(conn, options.body);
      else if (options.body) {
        for await (const chunk of options.body) await writeAll(conn, chunk);
      }
      bodySent = true;
    } catch {
      // The server answered and closed while we were still sending: what it said counts.
    }
  })();
  const reading = (async () => {
    const buffer = new Uint8Array(64 * 1024);
    try {
      while (true) {
        const n = await conn.read(buffer);
        if (n === null) {
          closed = true;
          return;
        }
        received.push(buffer.slice(0, n));
        size += n;
        if (headEnd < 0) headEnd = indexOf(concat(received, size), "\r\n\r\n");
        if (headEnd >= 0 && options.headOnly) return;
      }
    } catch {
      closed = true; // reset
    }
  })();
  const deadline = began + options.timeoutMs;
  await within(reading, deadline - performance.now(), options.signal);
  const ms = performance.now() - began;
  if (options.waitForBody) await within(writing, deadline - performance.now());
  if (options.keepOpen) options.keepOpen(conn);
  else {
    try {
      conn.close();
    } catch { /* closed already */ }
  }
  // Closing ends a write still under way.
  await within(writing, 1_000);
  return { ...parseHead(concat(received, size)), ms, closed, bodySent };
}

/** Waits for `promise`, or `ms` at most (or until `signal` aborts); leaves no timer behind. */
export async function within(
  promise: Promise<unknown>,
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stop: (() => void) | undefined;
  await Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, ms));
      stop = resolve;
      signal?.addEventListener("abort", stop, { once: true });
      if (signal?.aborted) resolve();
    }),
  ]);
  clearTimeout(timer);
  if (stop) signal?.removeEventListener("abort", stop);
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array) {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const all = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}

function indexOf(bytes: Uint8Array, text: string): number {
  const needle = new TextEncoder().encode(text);
  outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function parseHead(bytes: Uint8Array): Pick<Exchange, "status" | "headers" | "body"> {
  const end = indexOf(bytes, "\r\n\r\n");
  const head = new TextDecoder().decode(bytes.subarray(0, Math.max(end, 0)));
  if (end < 0 || !head.startsWith("HTTP/1.1 ")) {
    return { status: 0, headers: new Headers(), body: bytes };
  }
  const [statusLine, ...lines] = head.split("\r\n");
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body: bytes.subarray(end + 4) };
}
