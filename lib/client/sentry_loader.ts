/**
 * @module
 * Starts the Sentry browser SDK on a page with islands (a page without ships no script at all): the
 * page's `<meta name="app-sentry">` names the SDK chunk and its settings. The chunk is imported
 * once the page has loaded, the islands' chunks being fetched have arrived and the browser is idle:
 * never on the critical path; errors from before then wait in `report.ts`'s queue. What the page
 * says is read as the runtime starts, since a client-side failure screen may replace the document
 * before then, and the trace's meta tags are put back if so: the SDK continues the server's trace
 * from them.
 */
import { decodeSettings, SENTRY_META } from "../shared/sentry_page_settings.ts";

const TRACE_META = ["sentry-trace", "baggage"];

/** `islandsLoaded`: settles once the islands' chunks being fetched have arrived (or failed). */
export function startSentryWhenIdle(islandsLoaded: () => Promise<unknown>): void {
  const meta = document.querySelector<HTMLMetaElement>(`meta[name="${SENTRY_META}"]`);
  if (!meta) return; // Sentry is off
  const { sdk, config } = decodeSettings(meta.content);
  const trace = TRACE_META.map((name) => document.querySelector(`meta[name="${name}"]`));
  const start = () =>
    islandsLoaded().then(() =>
      (self.requestIdleCallback ?? setTimeout)(() =>
        import(sdk).then((m) => {
          for (const tag of trace) if (tag && !tag.isConnected) document.head.append(tag);
          m.start(config);
        })
      )
    );
  if (document.readyState === "complete") start();
  else addEventListener("load", start, { once: true });
}
