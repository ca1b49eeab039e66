/**
 * Attack 13, finding 1: a caller's `baggage` under Deno's OpenTelemetry, as `deno task start` runs
 * it with a Sentry DSN (the launcher turns Deno's tracing on). Deno 2.9.6 ran its own baggage
 * propagator on every request before the app, outside any catch: a value it could not
 * percent-decode (`baggage: a=%`) threw there, and the request was never answered - nor its
 * connection closed once the client had gone. Now the launcher leaves that propagator out, and the
 * app reads the caller's `baggage` and writes it on outgoing calls itself.
 */
import assert from "node:assert/strict";
import { startSentryReceiver } from "shell/testing";
import { builtTarget, exchange, startTarget } from "./target.ts";

const FILES = {
  "routes/findings/ok.ts": `export const handler = { GET: () => new Response("ok") };\n`,
  "routes/findings/upstream.ts": `export const handler = {
    async GET() {
      const res = await fetch(Deno.env.get("UPSTREAM")!);
      return new Response(await res.text());
    },
  };\n`,
};

/** An upstream on 127.0.0.1 that records the headers of each request it is sent, in order. */
function recordingUpstream(stack: AsyncDisposableStack): { url: string; seen: Headers[] } {
  const seen: Headers[] = [];
  const upstream = stack.use(Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      seen.push(req.headers);
      return new Response("upstream");
    },
  ));
  return { url: `http://127.0.0.1:${upstream.addr.port}/`, seen };
}

/**
 * The target with `files`, started by the launcher with every request traced to a Sentry receiver,
 * beside two upstreams its routes call (`UPSTREAM`, `THIRD_PARTY`); `seen` and `seenByThirdParty`
 * hold what each was sent, in order. `onlyUpstreamIsTarget`: `SENTRY_TRACE_PROPAGATION_TARGETS`
 * names `UPSTREAM` alone (unset otherwise: every host is a target).
 */
async function startTracedTarget(
  files: Record<string, string>,
  { onlyUpstreamIsTarget = false } = {},
) {
  const built = await builtTarget(files);
  const stack = new AsyncDisposableStack();
  try {
    const receiver = stack.use(startSentryReceiver());
    const upstream = recordingUpstream(stack);
    const thirdParty = recordingUpstream(stack);
    const server = stack.use(
      await startTarget(
        {
          SENTRY_DSN: receiver.dsn,
          SENTRY_TRACES_SAMPLE_RATE: "1",
          UPSTREAM: upstream.url,
          // Holding the target's URL in its query (a webhook's URL a user typed): a target that
          // is a URL matches by origin, not anywhere in the URL as Sentry's strings do.
          THIRD_PARTY: `${thirdParty.url}hook?next=${upstream.url}`,
          ...onlyUpstreamIsTarget ? { SENTRY_TRACE_PROPAGATION_TARGETS: upstream.url } : {},
        },
        { root: built.root, script: "lib/cli/launch.ts" },
      ),
    );
    const moved = stack.move();
    return {
      server,
      seen: upstream.seen,
      seenByThirdParty: thirdParty.seen,
      [Symbol.asyncDispose]: () => moved.disposeAsync(),
    };
  } catch (error) {
    await stack.disposeAsync();
    throw error;
  }
}

/** Values Deno's propagator could not decode: a bare `%`, in a key, past UTF-8. */
const UNDECODABLE = ["a=%", "%=1", "sentry-release=%ZZ,vendor=acme", "a=%C3%28"];

Deno.test("attack 13: a caller's baggage Deno cannot decode is answered, and the rest goes on", async () => {
  await using target = await startTracedTarget(FILES);
  const { server, seen } = target;
  for (const baggage of UNDECODABLE) {
    const head = `GET /findings/ok HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n` +
      `baggage: ${baggage}\r\nConnection: close\r\n\r\n`;
    const answer = await exchange(server.port, head, { timeoutMs: 5_000, headOnly: true });
    assert.equal(answer.status, 200, `baggage: ${baggage} (0: no answer)`);
  }

  // An outgoing call still carries the caller's other entries and the trace's DSC, once each.
  const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const res = await server.fetch("/findings/upstream", {
    headers: {
      traceparent: `00-${trace}-00f067aa0ba902b7-01`,
      baggage: `vendor=acme,broken=%ZZ,sentry-trace_id=${trace},sentry-public_key=callerkey`,
    },
  });
  assert.equal(await res.text(), "upstream");
  const sent = seen.at(-1)!;
  assert.equal(sent.get("traceparent")?.split("-")[1], trace, "the call is on the caller's trace");
  const members = sent.get("baggage")!.split(",");
  assert.ok(members.includes("vendor=acme"), `others' entries kept: ${members}`);
  assert.ok(!members.some((member) => member.startsWith("broken=")), "an undecodable one is not");
  assert.ok(members.includes(`sentry-trace_id=${trace}`), `the trace's DSC: ${members}`);
  assert.ok(members.includes("sentry-public_key=callerkey"), "the caller's DSC, as it came");
  assert.equal(new Set(members.map((m) => m.split("=")[0])).size, members.length, "once each");
});

const OWN_BAGGAGE = {
  "routes/findings/own_baggage.ts": `export const handler = {
    async GET() {
      const res = await fetch(Deno.env.get("UPSTREAM")!, { headers: { baggage: "tenant=b" } });
      return new Response(await res.text());
    },
  };\n`,
};

Deno.test("review 14: an outgoing call's baggage keeps W3C's limits, the DSC first, and the call's own entries", async () => {
  await using target = await startTracedTarget({ ...FILES, ...OWN_BAGGAGE });
  const { server, seen } = target;
  const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const traceparent = `00-${trace}-00f067aa0ba902b7-01`;

  // A caller (no Sentry SDK) whose baggage is 8 KB exactly, of a thousand small members: what
  // goes on is within 8 KB and 180 members (as Deno's propagator sends it), the trace's DSC in it.
  // Before: 8,396 characters, over a thousand members, the DSC last - and a receiver of a header past 8 KB
  // takes no DSC from it (dsc.ts).
  const small = Array.from({ length: 1_000 }, (_, i) => `k${String(i).padStart(4, "0")}=1`);
  const big = `${small.join(",")},pad=`.padEnd(8_192, "x");
  assert.equal(big.length, 8_192);
  let res = await server.fetch("/findings/upstream", { headers: { traceparent, baggage: big } });
  assert.equal(await res.text(), "upstream");
  let sent = seen.at(-1)!.get("baggage")!;
  assert.ok(sent.length <= 8_192, `at most 8 KB: ${sent.length}`);
  let members = sent.split(",");
  assert.ok(members.length <= 180, `at most 180 members: ${members.length}`);
  assert.ok(members.includes(`sentry-trace_id=${trace}`), `the trace's DSC: ${members.slice(-8)}`);
  assert.ok(members.includes("k0000=1"), "the caller's first entries go on");

  // A call that sets its own baggage: its value of a key is the one that goes, once.
  res = await server.fetch("/findings/own_baggage", {
    headers: { traceparent, baggage: "tenant=a,vendor=acme" },
  });
  assert.equal(await res.text(), "upstream");
  sent = seen.at(-1)!.get("baggage")!;
  members = sent.split(",");
  assert.deepEqual(members.filter((m) => m.startsWith("tenant=")), ["tenant=b"], sent);
  assert.ok(members.includes("vendor=acme"), sent);
  assert.ok(members.includes(`sentry-trace_id=${trace}`), sent);
});

Deno.test("review 14: a caller's baggage goes on as Deno's propagator sends it: properties kept, the last of a key", async () => {
  await using target = await startTracedTarget(FILES);
  const { server, seen } = target;
  const res = await server.fetch("/findings/upstream", {
    headers: {
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      baggage: "dup=1,region=eu;ttl=30;hop,dup=2",
    },
  });
  assert.equal(await res.text(), "upstream");
  const members = seen.at(-1)!.get("baggage")!.split(",");
  // Before: region=eu (its properties lost) and dup=1 (Deno's propagator keeps the last).
  assert.ok(members.includes("region=eu;ttl=30;hop"), `properties kept: ${members}`);
  assert.deepEqual(members.filter((m) => m.startsWith("dup=")), ["dup=2"], `${members}`);
});

const BOTH = {
  "routes/findings/both.ts": `export const handler = {
    async GET() {
      const [upstream, thirdParty] = await Promise.all([
        fetch(Deno.env.get("UPSTREAM")!),
        fetch(Deno.env.get("THIRD_PARTY")!),
      ]);
      return new Response(await upstream.text() + await thirdParty.text());
    },
  };\n`,
};

Deno.test("gaps13: a caller's baggage goes to propagation targets only, as the DSC does", async () => {
  await using target = await startTracedTarget(BOTH, { onlyUpstreamIsTarget: true });
  const { server, seen, seenByThirdParty } = target;
  const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const res = await server.fetch("/findings/both", {
    headers: {
      traceparent: `00-${trace}-00f067aa0ba902b7-01`,
      baggage: `tenant=acme,user=ada%40example.com,sentry-trace_id=${trace}`,
    },
  });
  assert.equal(await res.text(), "upstreamupstream");
  // The target: the caller's entries and the trace's DSC.
  const members = seen.at(-1)!.get("baggage")!.split(",");
  assert.ok(members.includes("tenant=acme"), `${members}`);
  assert.ok(members.includes("user=ada%40example.com"), `${members}`);
  assert.ok(members.includes(`sentry-trace_id=${trace}`), `${members}`);
  // The third party: still on the trace (Deno's traceparent), but none of the caller's baggage -
  // before, tenant=acme and user=ada%40example.com went to it.
  const third = seenByThirdParty.at(-1)!;
  assert.equal(third.get("traceparent")?.split("-")[1], trace, "Deno's traceparent");
  assert.equal(third.get("sentry-trace"), null);
  assert.equal(third.get("baggage"), null, `sent: ${third.get("baggage")}`);
});
