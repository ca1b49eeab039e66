/**
 * @module
 * The product's settings in a page's server components (`useSettings(settings)`): typed, in the
 * page, a layout, `_app`, a component at any depth, an error page and an island's static children,
 * with or without a handler. Not in an island (it renders in the browser too): the page fails,
 * naming the island. A secret's value never reaches an island's props - as the value, inside a
 * text, an object's key, a URL, a RegExp's pattern, bytes, percent-encoded, the settings spread whole, or passed down from the handler's
 * `settings(ctx)` - the render fails, its log line naming the setting and never the value, and no
 * byte of it is in the answer. Outside a render, or with another app's declaration: a clear error.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import type { ReactNode } from "react";
import {
  defineSettings,
  type ErrorPageProps,
  type Handlers,
  httpError,
  type LayoutProps,
  secret,
  useSettings,
} from "../lib/mod.ts";
import { captureLogs } from "../lib/testing.ts";
import { flag, wholeNumber } from "../lib/settings/values.ts";
import { memoryApp } from "./helpers/app.ts";

const KEY = "sk_live_4f9a8c7e6d5b4a3c2e1f";

const settings = defineSettings({
  PAGE_SIZE: v.optional(wholeNumber(1, 100, "a number of rows"), "20"),
  BETA: v.optional(flag, "0"),
  PAYMENTS_KEY: secret(v.pipe(v.string(), v.regex(/^sk_live_\w{20,}$/, "expected sk_live_..."))),
  PIN: v.optional(secret(v.string()), "4711"),
  SIGNING_KEY: v.optional(secret(v.string()), "q8Z+k2/Lm9xR4t7W="),
});

/** An island: what it is given, shown. */
function Shown(props: { value?: unknown; children?: ReactNode }) {
  return <output>{String(props.value)}{props.children}</output>;
}

/** An island that reads the settings itself: not allowed. */
function ReadsSettings() {
  return <output>{useSettings(settings).PAGE_SIZE}</output>;
}

/** A component deep in a page, typed by the declaration. */
function Footer() {
  const { PAGE_SIZE, BETA } = useSettings(settings);
  const rows: number = PAGE_SIZE;
  const beta: boolean = BETA;
  return <footer>{`rows ${rows}, beta ${beta}`}</footer>;
}

const page = (render: () => ReactNode) => ({ default: render });
const api = (handler: Handlers["GET"]): { handler: Handlers } => ({ handler: { GET: handler } });

function app(islands = true) {
  return memoryApp({
    settings,
    routes: {
      "_app.tsx": {
        default: ({ Component }: LayoutProps) => (
          <html>
            <body data-beta={String(useSettings(settings).BETA)}>
              <Component />
            </body>
          </html>
        ),
      },
      "_layout.tsx": {
        default: ({ Component }: LayoutProps) => (
          <main data-rows={useSettings(settings).PAGE_SIZE}>
            <Component />
          </main>
        ),
      },
      "_error.tsx": {
        default: ({ status }: ErrorPageProps) => (
          <p>{`error ${status}, rows ${useSettings(settings).PAGE_SIZE}`}</p>
        ),
      },
      "list.tsx": page(() => (
        <>
          <h1>{`${useSettings(settings).PAGE_SIZE} rows`}</h1>
          <Footer />
          <Shown value={useSettings(settings).PAGE_SIZE}>
            <Footer />
          </Shown>
        </>
      )),
      "refused.tsx": {
        handler: { GET: () => Promise.reject(httpError(403, "members only")) },
        default: () => null,
      },
      "island-reads.tsx": page(() => <ReadsSettings />),
      "leak/value.tsx": page(() => <Shown value={useSettings(settings).PAYMENTS_KEY} />),
      "leak/text.tsx": page(() => (
        <Shown value={`Authorization: Bearer ${useSettings(settings).PAYMENTS_KEY}`} />
      )),
      "leak/deep.tsx": page(() => (
        <Shown
          value={{ config: [new Map([["key", new Set([useSettings(settings).PAYMENTS_KEY])]])] }}
        />
      )),
      "leak/key.tsx": page(() => <Shown value={{ [useSettings(settings).PAYMENTS_KEY]: true }} />),
      "leak/url.tsx": page(() => (
        <Shown value={new URL(`https://pay.example/?key=${useSettings(settings).PAYMENTS_KEY}`)} />
      )),
      "leak/pattern.tsx": page(() => (
        <Shown value={new RegExp(`^Bearer ${useSettings(settings).PAYMENTS_KEY}$`)} />
      )),
      // Bytes, as WebCrypto takes a key: devalue sends a view's whole buffer, in base64.
      "leak/bytes.tsx": page(() => (
        <Shown value={new TextEncoder().encode(useSettings(settings).PAYMENTS_KEY)} />
      )),
      "leak/bytes-part.tsx": page(() => (
        <Shown
          value={new TextEncoder().encode(`k=${useSettings(settings).PAYMENTS_KEY}`).subarray(0, 2)}
        />
      )),
      // A key in base64 ('+', '/', '='), percent-encoded as a query string writes it.
      "leak/search-params.tsx": page(() => (
        <Shown value={new URLSearchParams({ token: useSettings(settings).SIGNING_KEY })} />
      )),
      "leak/search-params-set.tsx": page(() => {
        const url = new URL("https://api.example/verify");
        url.searchParams.set("token", useSettings(settings).SIGNING_KEY);
        return <Shown value={url} />;
      }),
      "leak/encoded.tsx": page(() => (
        <Shown
          value={`https://api.example/?token=${
            encodeURIComponent(useSettings(settings).SIGNING_KEY)
          }`}
        />
      )),
      "leak/all.tsx": page(() => <Shown value={{ ...useSettings(settings) }} />),
      "leak/short.tsx": page(() => <Shown value={useSettings(settings).PIN} />),
      "leak/from-handler.tsx": {
        handler: {
          GET: (_req, ctx) => ctx.render({ key: settings(ctx).PAYMENTS_KEY }),
        } satisfies Handlers<{ key: string }>,
        default: ({ data }: { data: { key: string } }) => <Shown value={data} />,
      },
      "short-text.tsx": page(() => <Shown value="the pin is not 4711-ish: 47110" />),
      // Bytes: a typed array's keys are its indexes (4711 among them), never text it holds.
      "bytes.tsx": page(() => <Shown value={new Uint8Array(5_000)} />),
      "api/read.ts": api(() => Response.json(useSettings(settings))),
    },
    islands: islands ? { Shown, ReadsSettings } : {},
  }, { settings: { PAYMENTS_KEY: KEY, BETA: true } });
}

Deno.test("a page, its layout, _app, a component at any depth and an island's children read the settings, typed", async () => {
  await using it = { app: app(), [Symbol.asyncDispose]: () => it.app.close() };
  const res = await it.app.request("/list");
  assert.equal(res.status, 200);
  const html = await res.text();
  assert.match(html, /<body data-beta="true">/, "_app");
  assert.match(html, /<main data-rows="20">/, "the layout");
  assert.match(html, /<h1>20 rows<\/h1>/, "the page");
  assert.equal(
    html.match(/<footer>rows 20, beta true<\/footer>/g)?.length,
    2,
    "deep, and as an island's child",
  );
  assert.match(html, /<app-island name="Shown"[^>]*props="\[\{&quot;value&quot;:1\},20\]"/);
  assert.ok(!html.includes(KEY));
});

Deno.test("an error page reads them too", async () => {
  await using it = { app: app(), [Symbol.asyncDispose]: () => it.app.close() };
  const res = await it.app.request("/refused");
  assert.equal(res.status, 403);
  assert.match(await res.text(), /error 403, rows 20/);
});

Deno.test("an island cannot read them: the page fails, naming why", async () => {
  await using it = { app: app(), [Symbol.asyncDispose]: () => it.app.close() };
  using logs = captureLogs();
  const res = await it.app.request("/island-reads");
  assert.equal(res.status, 500);
  await res.body?.cancel();
  assert.match(String(logs.of(res)[0]?.msg), /useSettings\(\) in an island/);
});

Deno.test("a secret's value never reaches an island's props: the render fails naming the setting, not the value", async () => {
  await using it = { app: app(), [Symbol.asyncDispose]: () => it.app.close() };
  const cases: Record<string, [path: string, setting: string]> = {
    "the value": ["/leak/value", "PAYMENTS_KEY"],
    "inside a text": ["/leak/text", "PAYMENTS_KEY"],
    "deep in a Set in a Map in an array in an object": ["/leak/deep", "PAYMENTS_KEY"],
    "an object's key": ["/leak/key", "PAYMENTS_KEY"],
    "in a URL": ["/leak/url", "PAYMENTS_KEY"],
    "in a RegExp's pattern (devalue sends its source)": ["/leak/pattern", "PAYMENTS_KEY"],
    "as bytes (sent in base64)": ["/leak/bytes", "PAYMENTS_KEY"],
    "percent-encoded in URLSearchParams": ["/leak/search-params", "SIGNING_KEY"],
    "percent-encoded by a URL's searchParams.set": ["/leak/search-params-set", "SIGNING_KEY"],
    "percent-encoded by encodeURIComponent in a text": ["/leak/encoded", "SIGNING_KEY"],
    "in the buffer of a view of two bytes (the whole buffer is sent)": [
      "/leak/bytes-part",
      "PAYMENTS_KEY",
    ],
    "the settings spread whole (PIN comes first)": ["/leak/all", "PIN"],
    "a short secret as the whole value": ["/leak/short", "PIN"],
    "passed down from the handler's settings(ctx)": ["/leak/from-handler", "PAYMENTS_KEY"],
  };
  for (const [what, [path, setting]] of Object.entries(cases)) {
    using logs = captureLogs();
    const res = await it.app.request(path);
    assert.equal(res.status, 500, what);
    // Less the CSP nonce: 16 random bytes in base64 hold "4711" about once in 900,000 answers.
    const html = (await res.text()).replace(/ nonce="[^"]*"/g, "");
    assert.ok(!html.includes(KEY) && !html.includes("4711"), `${what}: not in the answer`);
    const lines = logs.of(res);
    assert.equal(lines.length, 1, what);
    assert.match(
      String(lines[0].msg),
      new RegExp(`Island <Shown> got a prop that holds the secret setting ${setting}'s value`),
      what,
    );
    assert.ok(!JSON.stringify(lines).includes(KEY), `${what}: not in the log line`);
  }
  // A secret shorter than 8 characters is looked for as a whole value only.
  const res = await it.app.request("/short-text");
  assert.equal(res.status, 200);
  await res.body?.cancel();
  // A typed array's indexes are not its values (one of 5,000 bytes is the PIN's "4711").
  const bytes = await it.app.request("/bytes");
  assert.equal(bytes.status, 200);
  await bytes.body?.cancel();
});

Deno.test("outside a page's render, or with another app's declaration: a clear error", async () => {
  await using it = { app: app(), [Symbol.asyncDispose]: () => it.app.close() };
  using logs = captureLogs();
  const res = await it.app.request("/api/read");
  assert.equal(res.status, 500);
  await res.body?.cancel();
  assert.match(
    String(logs.of(res)[0]?.msg),
    /in a handler, a middleware or an action use settings\(ctx\)/,
  );

  const other = defineSettings({ PAGE_SIZE: v.optional(v.string(), "1") });
  const stranger = memoryApp({
    settings,
    routes: { "x.tsx": page(() => <p>{useSettings(other).PAGE_SIZE}</p>) },
  }, { settings: { PAYMENTS_KEY: KEY } });
  const wrong = await stranger.request("/x");
  assert.equal(wrong.status, 500);
  await wrong.body?.cancel();
  assert.match(String(logs.of(wrong)[0]?.msg), /not made with these settings/);
  await stranger.close();

  // An app with no routes/_settings.ts renders the page all the same: the call is in a page.
  const none = memoryApp({
    routes: { "x.tsx": page(() => <p>{useSettings(other).PAGE_SIZE}</p>) },
  });
  const unsettled = await none.request("/x");
  assert.equal(unsettled.status, 500);
  await unsettled.body?.cancel();
  assert.match(String(logs.of(unsettled)[0]?.msg), /has no routes\/_settings\.ts/);
  await none.close();
});
