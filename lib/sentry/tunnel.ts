/**
 * @module
 * The tunnel (`SENTRY_TUNNEL=1`): a same-origin route the browser SDK posts its envelopes to, so
 * ad-blockers that drop requests to Sentry's host don't drop them. It forwards only envelopes whose
 * header names our DSN — it is no open proxy — and only up to a body limit.
 */
import { dsnFromString, getEnvelopeEndpointWithUrlEncodedAuth } from "@sentry/core";
import type { Handler } from "hono";
import { bodyRefusal, limitBody } from "../server/bodies.ts";

const MAX_ENVELOPE = 1024 * 1024;
const UPSTREAM_TIMEOUT = 10_000;
const FORWARDED = ["Retry-After", "X-Sentry-Rate-Limits"];

export function sentryTunnel(dsn: string): Handler {
  const ours = dsnFromString(dsn)!;
  const endpoint = getEnvelopeEndpointWithUrlEncodedAuth(ours);
  const isOurs = (other: string | undefined) => {
    const theirs = other ? dsnFromString(other) : undefined;
    return theirs?.host === ours.host && theirs.port === ours.port &&
      theirs.projectId === ours.projectId && theirs.publicKey === ours.publicKey;
  };

  return async (c) => {
    const refused = limitBody(c, MAX_ENVELOPE);
    if (refused) return refused;
    let body: Uint8Array<ArrayBuffer>;
    try {
      body = new Uint8Array(await c.req.arrayBuffer());
    } catch (error) {
      const answer = bodyRefusal(c);
      if (answer) return answer;
      throw error;
    }
    if (!isOurs(envelopeDsn(body))) return c.text("Unknown DSN", 403);
    try {
      const res = await fetch(endpoint, {
        method: "POST",
        body,
        headers: { "Content-Type": "application/x-sentry-envelope" },
        signal: AbortSignal.timeout(UPSTREAM_TIMEOUT),
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
  };
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
