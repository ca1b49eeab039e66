/**
 * @module
 * The `<meta name="app-sentry">` a page carries for the browser SDK: its settings reach the browser
 * intact, whatever the operator's values hold, and go into the page as they are - nothing to escape
 * on every page (the garbage that made; docs/performance.md). A caller's `baggage` is escaped.
 */
import assert from "node:assert/strict";
import type { SentryConfig } from "../lib/sentry/config.ts";
import { type SpanIds, traceBaggage } from "../lib/sentry/dsc.ts";
import { sentryHead, unsampledHead } from "../lib/sentry/page.ts";
import { decodeSettings, encodeSettings, SENTRY_META } from "../lib/shared/sentry_page_settings.ts";

const SDK = "/_app/sentry-ABC123.js";

const config: SentryConfig = {
  dsn: "https://key@o1.ingest.example.io/42",
  // Every character HTML escapes, and some that percent-encoding keeps.
  environment: `it's "staging" <b>&amp;</b> !*()~`,
  release: "2026.11.27+ünïcode",
  tracesSampleRate: 0.1,
  tracesParentLimit: 10,
  tunnel: "/_sentry",
  scrubFields: ["x-api-key", "o'brien"],
  otlp: true,
};

const assets = {
  boot: { entry: "/_app/boot.js", imports: [] },
  islands: {},
  sentry: { entry: SDK, imports: [] },
};

const decoder = new TextDecoder();

function renderHead(trace?: { sentryTrace: string; baggage?: string }): string {
  return decoder.decode(
    sentryHead(config)(
      trace ?? { sentryTrace: `${"a".repeat(32)}-${"b".repeat(16)}-0` },
      assets,
    ),
  );
}

Deno.test("sentry page settings: nothing in them for HTML to escape, and they decode intact", () => {
  const settings = {
    sdk: SDK,
    config: {
      dsn: config.dsn,
      environment: config.environment,
      release: config.release,
      tracesSampleRate: 0.1,
      tunnel: "/_sentry",
      scrubFields: config.scrubFields,
    },
  };
  const content = encodeSettings(settings);
  assert.doesNotMatch(content, /["&'<>]/);
  assert.deepEqual(decodeSettings(content), settings);
});

Deno.test("sentry page settings: the page's tag holds them as they were encoded, unescaped", () => {
  const html = renderHead();
  const tag = html.match(new RegExp(`<meta name="${SENTRY_META}" content="([^"]*)"/>`));
  assert.ok(tag, html);
  assert.doesNotMatch(tag[1], /&/, "nothing to escape");
  const { sdk, config: browser } = decodeSettings(tag[1]);
  assert.equal(sdk, SDK);
  assert.equal(browser.dsn, config.dsn);
  assert.equal(browser.environment, config.environment);
  assert.equal(browser.release, config.release);
  assert.deepEqual(browser.scrubFields, config.scrubFields);
  // Rendered twice, the same tag: made once, for every page.
  assert.equal(renderHead(), html);
});

Deno.test("sentry page settings: a caller's baggage is escaped in its tag", () => {
  const html = renderHead({ sentryTrace: "t", baggage: `a="b"><script>x</script>&c='d'` });
  assert.match(
    html,
    /<meta name="baggage" content="a=&quot;b&quot;&gt;&lt;script&gt;x&lt;\/script&gt;&amp;c=&#39;d&#39;"\/>/,
  );
  assert.doesNotMatch(html, /<script>/);
});

/**
 * perf38: nine pages in ten (production's 0.1) get their tags as a copy of bytes made once, the ids
 * written in; they must be what the strings make, whatever the ids and the build's SDK chunk.
 */
Deno.test("sentry page settings: an unsampled trace's tags from the template are the strings' bytes", () => {
  const source = { publicKey: "key", environment: config.environment, release: config.release };
  const fromStrings = sentryHead(config);
  const fromTemplate = unsampledHead(config, source);
  const hex = (bytes: number) =>
    Array.from(
      crypto.getRandomValues(new Uint8Array(bytes)),
      (b) => b.toString(16).padStart(2, "0"),
    )
      .join("");
  const otherSdk = { ...assets, sentry: { entry: "/_app/sentry-DEF456.js", imports: [] } };
  const builds = [assets, otherSdk, { ...assets, sentry: undefined }];
  let last: { page: Uint8Array; html: string } | undefined;
  for (let i = 0; i < 60; i++) {
    const ids: SpanIds = { traceId: hex(16), spanId: hex(8), traceFlags: 0 };
    const trace = {
      sentryTrace: `${ids.traceId}-${ids.spanId}-0`,
      baggage: traceBaggage(ids, undefined, source),
    };
    // Pages of one build's SDK chunk, then of another's, then of none: the template follows it.
    const build = builds[Math.floor(i / 20)];
    const page = fromTemplate(ids, build);
    const html = decoder.decode(fromStrings(trace, build));
    assert.equal(decoder.decode(page), html);
    // Each page its own bytes: the next page's ids do not write over the last one's.
    if (last) assert.equal(decoder.decode(last.page), last.html);
    last = { page, html };
  }
});
