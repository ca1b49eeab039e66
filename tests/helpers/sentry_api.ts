/**
 * @module
 * A stand-in for the part of Sentry's web API that `sentry-cli sourcemaps upload` talks to, on
 * 127.0.0.1 (`SENTRY_URL`): it offers chunked uploads, asks for every chunk of an artifact bundle,
 * keeps them, and reads the bundle (a zip) back: its `manifest.json` says which file carries which
 * debug ID.
 */

export interface ManifestFile {
  type: string;
  url: string;
  headers: { "debug-id"?: string; sourcemap?: string };
}

export interface SentryApi extends AsyncDisposable {
  url: string;
  /** `METHOD path` and the `Authorization` header of every request, in order. */
  requests: { line: string; authorization: string | null }[];
  /** The projects named by the last assemble request. */
  projects: string[];
  /** The uploaded bundle's manifest: its files by path in the bundle. */
  manifest(): Promise<Record<string, ManifestFile>>;
}

export function startSentryApi(): SentryApi {
  const requests: SentryApi["requests"] = [];
  const chunks = new Map<string, Uint8Array>();
  let projects: string[] = [];
  let bundle: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const { pathname } = new URL(req.url);
    requests.push({
      line: `${req.method} ${pathname}`,
      authorization: req.headers.get("authorization"),
    });
    if (pathname.endsWith("/chunk-upload/") && req.method === "GET") {
      return Response.json({
        url: new URL(pathname, req.url).href,
        chunkSize: 8 * 1024 * 1024,
        chunksPerRequest: 64,
        maxFileSize: 2 ** 31,
        maxRequestSize: 32 * 1024 * 1024,
        concurrency: 1,
        hashAlgorithm: "sha1",
        compression: [],
        accept: ["artifact_bundles"],
      });
    }
    if (pathname.endsWith("/chunk-upload/")) {
      for (const [, part] of await req.formData()) {
        const file = part as File;
        chunks.set(file.name, new Uint8Array(await file.arrayBuffer()));
      }
      return new Response(null);
    }
    if (pathname.endsWith("/artifactbundle/assemble/")) {
      const body = await req.json();
      projects = body.projects;
      bundle = body.chunks;
      const missing = bundle.filter((sha) => !chunks.has(sha));
      return Response.json({ state: missing.length ? "not_found" : "ok", missingChunks: missing });
    }
    await req.body?.cancel();
    return new Response("not found", { status: 404 });
  });

  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    get projects() {
      return projects;
    },
    async manifest() {
      const zip = concat(bundle.map((sha) => chunks.get(sha)!));
      return JSON.parse(new TextDecoder().decode(await zipEntry(zip, "manifest.json"))).files;
    },
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}

/**
 * One entry of a zip archive, found through its central directory (stored or deflated). The bundle
 * starts with a header of its own (`SYSB`, a version); the zip's offsets count it in.
 */
async function zipEntry(zip: Uint8Array, name: string): Promise<Uint8Array> {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  let end = zip.length - 22;
  while (end >= 0 && view.getUint32(end, true) !== 0x06054b50) end--;
  if (end < 0) throw new Error("not a zip archive");
  let at = view.getUint32(end + 16, true);
  for (let n = view.getUint16(end + 10, true); n > 0; n--) {
    const nameLength = view.getUint16(at + 28, true);
    const entry = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength));
    if (entry === name) {
      const method = view.getUint16(at + 10, true);
      const size = view.getUint32(at + 20, true);
      const local = view.getUint32(at + 42, true);
      const data = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
      const raw = zip.slice(data, data + size);
      if (method === 0) return raw;
      const inflated = new Blob([raw]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
      return new Uint8Array(await new Response(inflated).arrayBuffer());
    }
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  throw new Error(`no ${name} in the archive`);
}
