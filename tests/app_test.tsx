/**
 * @module
 * `createApp(manifest, options)` makes apps that share nothing but their modules: two in one
 * process, from one manifest, with other options (development or not, the deadline, the origins
 * and hosts), each behave and show error details as configured, and closing one leaves the other
 * serving, its own event streams open.
 */
import assert from "node:assert/strict";
import { encodeCall } from "../lib/shared/action_wire.ts";
import type { RouteContext } from "../lib/mod.ts";
import { captureLogs } from "shell/testing";
import { actionIdOf, memoryManifest } from "./helpers/app.ts";
import { eventStream } from "../lib/mod.ts";
import { type App, createApp } from "../lib/server.ts";
import { FIXTURE_ROOT } from "./helpers/project_copy.ts";
import { within } from "./helpers/wait.ts";

const SECRET = "s3cret-two-apps";
const ACTIONS = "routes/_two/actions.ts";

/** Timers of `/slow` still pending when a test ends: cleared, so none leaks. */
const timers = new Set<ReturnType<typeof setTimeout>>();

const manifest = memoryManifest({
  routes: {
    "fail.ts": {
      handler: {
        GET() {
          throw new Error(`fail: ${SECRET}`);
        },
      },
    },
    // Answers after 300 ms: within one app's deadline, past the other's.
    "slow.ts": {
      handler: {
        GET: () =>
          new Promise<Response>((resolve) => {
            const timer = setTimeout(() => {
              timers.delete(timer);
              resolve(new Response("slow but fine"));
            }, 300);
            timers.add(timer);
          }),
      },
    },
    "index.tsx": { default: () => <h1>Home</h1> },
    // One event, then open until the stream ends.
    "stream.ts": {
      handler: {
        GET: (req: Request, ctx: RouteContext) =>
          eventStream(req, ctx, async function* (signal) {
            yield { data: "hello" };
            await new Promise((resolve) => signal.addEventListener("abort", resolve));
          }),
      },
    },
  },
  actions: { [ACTIONS]: { echo: (...args: unknown[]) => Promise.resolve(args) } },
});

const DEV = { dev: true, requestTimeoutMs: 100, origins: ["https://dev.example"] };
const PROD = { dev: false, requestTimeoutMs: 5_000, origins: ["https://prod.example"] };

function appWith(options: typeof DEV): App {
  return createApp(manifest, { root: FIXTURE_ROOT, ...options });
}

Deno.test("two apps in one process keep to their own options", async (t) => {
  using _logs = captureLogs();
  using _timers = { [Symbol.dispose]: () => timers.forEach(clearTimeout) };
  const dev = appWith(DEV);
  const prod = appWith(PROD);
  const at = (origin: string, path: string) => `${origin}${path}`;

  await t.step("error details: development shows the message, production never", async () => {
    const shown = await (await dev.request(at("https://dev.example", "/fail"))).text();
    assert.match(shown, new RegExp(`<pre>Error: fail: ${SECRET}`));
    const hidden = await prod.request(at("https://prod.example", "/fail"));
    assert.equal(hidden.status, 500);
    const body = await hidden.text();
    assert.ok(!body.includes(SECRET));
    assert.ok(!body.includes("<pre>"));
  });

  await t.step(
    "the deadline: 100 ms ends the slow route in one, 5 s lets it finish in the other",
    async () => {
      const cut = await dev.request(at("https://dev.example", "/slow"));
      assert.equal(cut.status, 500);
      assert.match(await cut.text(), /DeadlineExceeded: The request did not finish within 100 ms/);
      const fine = await prod.request(at("https://prod.example", "/slow"));
      assert.equal(fine.status, 200);
      assert.equal(await fine.text(), "slow but fine");
    },
  );

  await t.step("hosts: each answers its own origin's host, and 400 for the other's", async () => {
    for (const [app, own, other] of [[dev, "dev", "prod"], [prod, "prod", "dev"]] as const) {
      const ok = await app.request(at(`https://${own}.example`, "/"));
      await ok.body?.cancel();
      assert.equal(ok.status, 200, own);
      const refused = await app.request(at(`https://${other}.example`, "/"));
      assert.equal(refused.status, 400, `${own} app, ${other} host`);
      // Says what to change: a browser test serving the app on 127.0.0.1 meets this first.
      assert.equal(
        await refused.text(),
        "Bad Request: unknown host; this app answers only the hosts of its origins " +
          "(APP_ORIGIN, createApp's origins) and ALLOWED_HOSTS (allowedHosts)",
      );
    }
  });

  await t.step("actions: each accepts its own origin, and 403 for the other's", async () => {
    const post = async (app: App, host: string, origin: string) => {
      const res = await app.request(
        at(`https://${host}.example`, `/_action/${actionIdOf(ACTIONS, "echo")}`),
        {
          method: "POST",
          body: encodeCall([1]),
          headers: { Origin: `https://${origin}.example` },
        },
      );
      await res.body?.cancel();
      return res.status;
    };
    assert.equal(await post(dev, "dev", "dev"), 200);
    assert.equal(await post(dev, "dev", "prod"), 403);
    assert.equal(await post(prod, "prod", "prod"), 200);
    assert.equal(await post(prod, "prod", "dev"), 403);
  });

  await t.step("closing one app ends its streams only: the other keeps serving", async () => {
    const other = appWith(DEV);
    const open = async (app: App) => {
      const res = await app.request(at("https://dev.example", "/stream"));
      assert.equal(res.status, 200);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let read = "";
      while (!read.includes("data: hello\n")) {
        const { done, value } = await reader.read();
        assert.ok(!done, `the stream ended before its event: ${read}`);
        read += value;
      }
      return reader;
    };
    const closing = await open(dev);
    const staying = await open(other);
    const stayingNext = staying.read();
    dev.close();
    assert.equal(
      (await within(closing.read(), 5_000, "the closed app's stream to end")).done,
      true,
    );
    // The closed app's streams ended at once; had the other's been tied to it, it would have too.
    const settled = await Promise.race([
      stayingNext.then(() => "ended"),
      tick().then(() => "open"),
    ]);
    assert.equal(settled, "open", "the other app's stream is still open");
    for (const [app, host] of [[prod, "prod"], [other, "dev"]] as const) {
      const res = await app.request(at(`https://${host}.example`, "/"));
      await res.body?.cancel();
      assert.equal(res.status, 200, `${host} app after the other closed`);
    }
    other.close();
    assert.equal((await within(stayingNext, 5_000, "its own close to end it")).done, true);
  });
});

/** A macrotask: what the closed app's end set in motion has run by then. */
function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
