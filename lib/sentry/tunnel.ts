/**
 * @module
 * The tunnel (`SENTRY_TUNNEL=1`): a same-origin route the browser SDK posts its envelopes to, so
 * ad-blockers that drop requests to Sentry's host don't drop them. It forwards only envelopes whose
 * header names our DSN - it is no open proxy - and only up to a body limit. A slow or hung Sentry
 * holds little, for a short while: an envelope stays counted against the app's body budget until
 * its forward ends (`server/bodies.ts`), at most `MAX_FORWARDS` forwards are in flight (503 with
 * `Retry-After` past them, so Sentry's troubles never take the whole budget from the app's own
 * requests), and each forward ends within `UPSTREAM_TIMEOUT_MS` and before the request's deadline,
 * with 502.
 */
import { dsnFromString, getEnvelopeEndpointWithUrlEncodedAuth } from "./sdk.ts";
import type { Context, Handler } from "hono";
import { bodyRefusal, limitBody } from "../server/bodies.ts";
import type {} from "../server/deadline.ts"; // `internalsOf(c).deadline`
import { internalsOf } from "../server/internals.ts";
import { timeLimit } from "../server/time_limit.ts";

const MAX_ENVELOPE = 1024 * 1024;
/**
 * Sentry's ingest answers in milliseconds: past this it is in trouble, and the browser moves on.
 */
export const UPSTREAM_TIMEOUT_MS = 5_000;
/** The share of the request's deadline still left that a forward may take: it ends first. */
const DEADLINE_SHARE = 0.9;
/** 16 MiB of envelopes at most, of the 64 MiB body budget's default. */
const MAX_FORWARDS = 16;
const FORWARDED = ["Retry-After", "X-Sentry-Rate-Limits"];

export function sentryTunnel(dsn: string): Handler {
  const endpoint = getEnvelopeEndpointWithUrlEncodedAuth(dsnFromString(dsn)!);
  const ourProject = projectOf(dsn);
  const isOurs = (other: string | undefined) =>
    other !== undefined && ourProject !== undefined && projectOf(other) === ourProject;
  let forwarding = 0;

  return async (c) => {
    if (forwarding >= MAX_FORWARDS) return busy(c);
    const refused = limitBody(c, MAX_ENVELOPE);
    if (refused) return refused;
    // Read before it takes a slot: an upload still arriving is held by the body budget and the
    // deadline, like any; counted here, sixteen stalled ones shut the tunnel for every browser.
    let body: Uint8Array<ArrayBuffer>;
    try {
      body = new Uint8Array(await c.req.arrayBuffer());
    } catch (error) {
      const answer = bodyRefusal(c);
      if (answer) return answer;
      throw error;
    }
    if (!isOurs(envelopeDsn(body))) return c.text("Unknown DSN", 403);
    if (forwarding >= MAX_FORWARDS) return busy(c);
    forwarding++;
    try {
      const deadline = internalsOf(c).deadline;
      const left = deadline ? (deadline.expiresAt - performance.now()) * DEADLINE_SHARE : Infinity;
      using limit = timeLimit(Math.max(0, Math.min(UPSTREAM_TIMEOUT_MS, left)));
      try {
        const res = await fetch(endpoint, {
          method: "POST",
          body,
          headers: { "Content-Type": "application/x-sentry-envelope" },
          signal: limit.signal,
        });
        await res.body?.cancel();
        const headers = new Headers();
        for (const name of FORWARDED) {
          const value = res.headers.get(name);
          if (value) headers.set(name, value);
        }
        return new Response(null, { status: res.status, headers });
      } catch {
        return c.body(null, 502);
      }
    } finally {
      forwarding--;
    }
  };
}

/** Past `MAX_FORWARDS`: a slot frees within the upstream timeout. */
function busy(c: Context): Response {
  return c.body(null, 503, { "Retry-After": String(UPSTREAM_TIMEOUT_MS / 1000) });
}

/**
 * What of a DSN names the project an envelope goes to: its public key, host and port, and project
 * id. Read with the URL parser, never Sentry's `dsnFromString`: that writes a DSN it cannot parse
 * to the console whole, so each envelope a client posted with a bogus one put its text in the
 * server's output - a mebibyte a request, and lines of any content (a forged JSON log line).
 */
function projectOf(dsn: string): string | undefined {
  const url = URL.parse(dsn);
  if (!url?.username) return undefined;
  // The project id as Sentry reads it: the last segment's leading digits, if it has any.
  const last = url.pathname.split("/").at(-1)!;
  return `${url.username}@${url.host}/${/^\d+/.exec(last)?.[0] ?? last}`;
}

/** The `dsn` of the envelope's header: its first line, JSON. */
function envelopeDsn(body: Uint8Array): string | undefined {
  const end = body.indexOf(10);
  try {
    const header = JSON.parse(new TextDecoder().decode(end < 0 ? body : body.subarray(0, end)));
    return typeof header?.dsn === "string" ? header.dsn : undefined;
  } catch {
    return undefined;
  }
}
