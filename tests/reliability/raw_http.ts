/**
 * @module
 * HTTP/1.1 over a raw TCP socket, for tests that must send exact bytes — a `..` path, a bad `Host`,
 * a lowercase method — where `fetch` would normalize or refuse them. The connection closes after
 * one response (`Connection: close`); a chunked body is decoded.
 */

export interface RawResponse {
  /** 0 when the server closed the connection without answering. */
  status: number;
  headers: Headers;
  body: string;
}

export interface RawRequest {
  method?: string;
  target: string;
  /** Header lines as sent, in order; `Host` is added unless `host` says otherwise. */
  headers?: [string, string][];
  /** The `Host` header's value; null leaves it out. */
  host?: string | null;
  /** Sent with a `Content-Length` (unless `headers` set one). */
  body?: string;
}

export function requestBytes(port: number, request: RawRequest): string {
  const host = request.host === undefined ? `127.0.0.1:${port}` : request.host;
  const lines = [
    `${request.method ?? "GET"} ${request.target} HTTP/1.1`,
    ...(host === null ? [] : [`Host: ${host}`]),
    ...(request.headers ?? []).map(([name, value]) => `${name}: ${value}`),
    "Connection: close",
  ];
  const { body } = request;
  const framed = request.headers?.some(([name]) =>
    /^(content-length|transfer-encoding)$/i.test(name)
  );
  if (body !== undefined && !framed) {
    lines.push(`Content-Length: ${new TextEncoder().encode(body).length}`);
  }
  return lines.join("\r\n") + "\r\n\r\n" + (body ?? "");
}

export async function send(port: number, bytes: string): Promise<RawResponse> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const received: number[] = [];
  try {
    await conn.write(new TextEncoder().encode(bytes));
    const buffer = new Uint8Array(64 * 1024);
    for (let n; (n = await conn.read(buffer)) !== null;) received.push(...buffer.subarray(0, n));
  } catch (error) {
    // A server may reset a connection it refuses; what it sent before still counts.
    if (
      !(error instanceof Deno.errors.ConnectionReset || error instanceof Deno.errors.BrokenPipe)
    ) {
      throw error;
    }
  } finally {
    conn.close();
  }
  return parse(new Uint8Array(received));
}

function parse(bytes: Uint8Array): RawResponse {
  const decode = (part: Uint8Array) => new TextDecoder().decode(part);
  const end = indexOfCrlf(bytes, 0, true);
  const head = decode(bytes.subarray(0, Math.max(end, 0)));
  if (!head.startsWith("HTTP/1.1 ") || end < 0) {
    return { status: 0, headers: new Headers(), body: decode(bytes) };
  }
  const [statusLine, ...headerLines] = head.split("\r\n");
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const raw = bytes.subarray(end + 4);
  const chunked = headers.get("transfer-encoding")?.includes("chunked");
  return {
    status: Number(statusLine.split(" ")[1]),
    headers,
    body: decode(chunked ? unchunk(raw) : raw),
  };
}

/** Where the next CRLF (or, with `double`, CRLF CRLF) starts; -1 when there is none. */
function indexOfCrlf(bytes: Uint8Array, from: number, double = false): number {
  for (let i = from; i + 1 < bytes.length; i++) {
    if (bytes[i] !== 0x0d || bytes[i + 1] !== 0x0a) continue;
    if (!double || (bytes[i + 2] === 0x0d && bytes[i + 3] === 0x0a)) return i;
  }
  return -1;
}

function unchunk(bytes: Uint8Array): Uint8Array {
  const out: number[] = [];
  let at = 0;
  while (at < bytes.length) {
    const lineEnd = indexOfCrlf(bytes, at);
    if (lineEnd < 0) break;
    const size = parseInt(new TextDecoder().decode(bytes.subarray(at, lineEnd)), 16);
    if (!size) break;
    out.push(...bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return new Uint8Array(out);
}
