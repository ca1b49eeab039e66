/**
 * @module
 * HTTP/1.1 GETs on one kept-alive loopback connection: the way to ask one chosen worker of
 * `deno serve --parallel` (the kernel hands each new connection to a worker; a connection stays
 * with it). `fetch` cannot say which pooled connection a request takes, so this writes the request
 * and reads the answer itself: status line, headers, then a `Content-Length` or chunked body.
 * Loopback servers of ours only; no compression asked for, so none is decoded.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface PinnedAnswer {
  status: number;
  headers: Headers;
  body: string;
}

export interface Pinned extends Disposable {
  get(path: string): Promise<PinnedAnswer>;
}

/** One connection to `127.0.0.1:port`, kept alive across `get`s (one at a time). */
export async function pinnedConnection(port: number): Promise<Pinned> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let buffered = new Uint8Array(0);
  const chunk = new Uint8Array(64 * 1024);

  const more = async () => {
    const n = await conn.read(chunk);
    if (n === null) throw new Error("the server closed the connection");
    const next = new Uint8Array(buffered.byteLength + n);
    next.set(buffered);
    next.set(chunk.subarray(0, n), buffered.byteLength);
    buffered = next;
  };
  /** The bytes up to `marker` (excluded), the marker consumed. */
  const until = async (marker: string) => {
    const bytes = encoder.encode(marker);
    for (let rounds = 0; rounds < 10_000; rounds++) {
      const at = indexOf(buffered, bytes);
      if (at >= 0) {
        const head = buffered.subarray(0, at);
        buffered = buffered.subarray(at + bytes.byteLength);
        return decoder.decode(head);
      }
      await more();
    }
    throw new Error(`no ${JSON.stringify(marker)} in the answer`);
  };
  const take = async (size: number) => {
    while (buffered.byteLength < size) await more();
    const out = buffered.subarray(0, size);
    buffered = buffered.subarray(size);
    return decoder.decode(out);
  };

  return {
    async get(path) {
      await conn.write(encoder.encode(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
      const [statusLine, ...lines] = (await until("\r\n\r\n")).split("\r\n");
      const headers = new Headers();
      for (const line of lines) {
        const colon = line.indexOf(":");
        headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
      }
      let body = "";
      if (headers.get("transfer-encoding")?.includes("chunked")) {
        for (let size = -1; size !== 0;) {
          size = parseInt(await until("\r\n"), 16);
          body += await take(size);
          await until("\r\n");
        }
      } else {
        body = await take(Number(headers.get("content-length") ?? 0));
      }
      return { status: Number(statusLine.split(" ")[1]), headers, body };
    },
    [Symbol.dispose]() {
      conn.close();
    },
  };
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.byteLength <= haystack.byteLength; i++) {
    for (let j = 0; j < needle.byteLength; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
