/**
 * Attack 14: the outgoing `baggage` the app writes itself under the launcher (Deno's baggage
 * propagator left out), from a caller's header of up to 8 KB. Driven in-process: the fetch wrapper
 * under a synchronous context manager (what Deno's OpenTelemetry gives it), on a stand-in fetch
 * that records the headers of the call.
 */
import assert from "node:assert/strict";
import {
  type Baggage,
  type Context,
  context,
  type ContextManager,
  propagation,
  ROOT_CONTEXT,
  trace,
} from "@opentelemetry/api";
import { propagateOnFetch } from "../lib/sentry/otel_fetch.ts";
import { INCOMING_BAGGAGE } from "../lib/otel/request_span.ts";

/** A context manager for synchronous calls: all the fetch wrapper reads before it calls fetch. */
class StackContextManager implements ContextManager {
  #stack: Context[] = [];
  active = () => this.#stack.at(-1) ?? ROOT_CONTEXT;
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    this.#stack.push(ctx);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.#stack.pop();
    }
  }
  bind = <T>(_ctx: Context, target: T) => target;
  enable = () => this;
  disable = () => this;
}

/** Distinct keys, shortest first: as many members as 8 KB can hold (1,900 and more). */
function manyMembers(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const keys = [...alphabet];
  for (const a of alphabet) for (const b of alphabet) keys.push(a + b);
  for (const a of alphabet) for (const b of alphabet) keys.push(`${a}${b}x`);
  let header = "";
  for (const key of keys) {
    const member = `${header ? "," : ""}${key}=`;
    if (header.length + member.length > 8_192) break;
    header += member;
  }
  return header;
}

Deno.test("attack 14: a caller's 8 KB of baggage members costs the outgoing call one pass, not one copy of the baggage per member", async () => {
  const sent: Headers[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (_input: RequestInfo | URL, init?: RequestInit) => {
    sent.push(new Headers(init?.headers));
    return Promise.resolve(new Response("upstream"));
  };
  const manager = new StackContextManager();
  context.setGlobalContextManager(manager);
  // Every Baggage copy the wrapper makes: OpenTelemetry's setEntry and removeEntry copy the whole
  // map, so one per member is quadratic in a caller's members.
  const proto = Object.getPrototypeOf(propagation.createBaggage()) as Baggage;
  const { setEntry, removeEntry } = proto;
  let copies = 0;
  proto.setEntry = function (...args) {
    copies++;
    return setEntry.apply(this, args);
  };
  proto.removeEntry = function (...args) {
    copies++;
    return removeEntry.apply(this, args);
  };
  try {
    propagateOnFetch({
      source: { publicKey: "ourkey", environment: "production" },
      privateHosts: [],
    });
    const header = manyMembers();
    const members = header.split(",").length;
    assert.ok(members > 1_900, `${members} members`);
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const span = trace.wrapSpanContext({ traceId, spanId: "00f067aa0ba902b7", traceFlags: 1 });
    const call = (baggage: string) =>
      context.with(
        trace.setSpan(ROOT_CONTEXT, span).setValue(INCOMING_BAGGAGE, baggage),
        () => globalThis.fetch("http://127.0.0.1:9/upstream"),
      );

    await call(header);
    assert.ok(copies <= 10, `${copies} copies of the baggage for ${members} members`);
    const out = sent.at(-1)!.get("baggage")!.split(",");
    assert.equal(out[0], `sentry-trace_id=${traceId}`, "the DSC first");
    assert.equal(out.length, 180, "W3C's member limit");

    // What goes on is as before: the caller's properties kept, the last of a key, its sentry-*
    // entries of another trace dropped (the trace's own DSC instead), values encoded.
    await call(
      "region=eu;ttl=30;hop,dup=1,dup=2,sentry-trace_id=ffffffffffffffffffffffffffffffff," +
        "sentry-public_key=theirs,evil=%2Csentry-release%3Dforged",
    );
    const last = sent.at(-1)!.get("baggage")!.split(",");
    assert.ok(last.includes("region=eu;ttl=30;hop"), `properties kept: ${last}`);
    assert.ok(last.includes("dup=2") && !last.includes("dup=1"), `the last of a key: ${last}`);
    assert.ok(last.includes(`sentry-trace_id=${traceId}`), `our DSC: ${last}`);
    assert.ok(last.includes("sentry-public_key=ourkey"), `not the caller's key: ${last}`);
    assert.ok(last.includes("evil=%2Csentry-release%3Dforged"), `a value stays one: ${last}`);
    assert.equal(last.filter((member) => member.startsWith("sentry-public_key=")).length, 1);
  } finally {
    proto.setEntry = setEntry;
    proto.removeEntry = removeEntry;
    context.disable();
    globalThis.fetch = realFetch;
  }
});

Deno.test("attack 14: under Deno's baggage propagator, a caller's 200 members with numeric keys leave the trace's DSC within the 180 Deno writes", async () => {
  // What Deno's propagator would write: the first 180 entries of the call's baggage, in its order.
  let written: string[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = () => {
    const bag = propagation.getBaggage(context.active());
    written = (bag?.getAllEntries() ?? []).map(([key]) => key).slice(0, 180);
    return Promise.resolve(new Response("upstream"));
  };
  context.setGlobalContextManager(new StackContextManager());
  // Deno's propagator on (deno serve with OTEL_DENO=true): it extracts and writes baggage itself.
  propagation.setGlobalPropagator({
    inject() {},
    extract: (ctx) => ctx,
    fields: () => ["traceparent", "baggage"],
  });
  try {
    propagateOnFetch({
      source: { publicKey: "ourkey", environment: "production" },
      privateHosts: [],
    });
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const span = trace.wrapSpanContext({ traceId, spanId: "00f067aa0ba902b7", traceFlags: 1 });
    // As Deno extracts a caller's `baggage: 0=v,1=v,...,199=v` into the request's context.
    const callers = propagation.createBaggage(
      Object.fromEntries(Array.from({ length: 200 }, (_, i) => [String(i), { value: "v" }])),
    );
    await context.with(
      propagation.setBaggage(trace.setSpan(ROOT_CONTEXT, span), callers),
      () => globalThis.fetch("http://127.0.0.1:9/upstream"),
    );
    assert.ok(written.includes("sentry-trace_id"), `the DSC among the 180: ${written.slice(-3)}`);
    assert.ok(written.includes("0"), "the caller's entries too");
  } finally {
    propagation.disable();
    context.disable();
    globalThis.fetch = realFetch;
  }
});
