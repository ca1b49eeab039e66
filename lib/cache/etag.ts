/**
 * @module
 * Validators of stored pages: the ETag of a stored body, and `If-None-Match` compared with it as
 * RFC 9110 (13.1.2) says - the weak comparison, a list of tags, or `*`. Written here because
 * `hono/etag` keeps its comparison private (and does not take `*`), and its middleware reads the
 * whole body of every response, which a streamed page cannot wait for.
 *
 * The tag is weak (`W/"..."`): each response of a stored page carries its own CSP nonce, so two of
 * them are the same page but not the same bytes (RFC 9110 8.8.1), which a strong tag would claim.
 */

/** `W/"..."`: 128 bits of the SHA-256 of `body`, base64url. */
export async function etagOf(body: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body)).subarray(0, 16);
  const base64 = btoa(String.fromCharCode(...digest));
  return `W/"${base64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")}"`;
}

/** Whether `ifNoneMatch` (the request's header) names `etag`: weak comparison, lists, `*`. */
export function matchesIfNoneMatch(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  const opaque = etag.replace(/^W\//, "");
  for (const candidate of ifNoneMatch.split(",")) {
    if (candidate.trim().replace(/^W\//, "") === opaque) return true;
  }
  return false;
}
