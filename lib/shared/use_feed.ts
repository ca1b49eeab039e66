/**
 * @module
 * `useFeed(url, { since, on })`: an island's end of a server's event stream (`eventStream`,
 * `changeStream`), so no island writes `EventSource` code of its own. It opens the stream after
 * hydration with `?since=` the last event id the page has; when a healthy stream drops, the
 * browser's own reconnection gets one quick try (it sends `Last-Event-ID`, and the server sends
 * what was missed); after that, or when the server refused the stream (a 503, a deploy), or when
 * it ended before it was healthy (a source that fails as it opens), the hook opens it again
 * itself, backing off - growing, capped, jittered, so that a thousand pages do not come back in
 * the same second - with `?since=` the last id it got. Healthy is a stream that stayed open 5 s
 * (`retry.steadyMs`): only then does the backoff start again from its first delay, so a broken
 * feed is asked for less and less often, not each second. Events do not make a stream healthy: a
 * source that sends its first event (a hello, a snapshot) and then fails delivers one each time,
 * and counting that as health had every page reopen it about once a second, a failure on the
 * server each time, for as long as the page was open. A hidden page holds no stream:
 * it closes on `visibilitychange` (hidden) and `pagehide`, and opens again, from where it was,
 * when the page is shown (`visibilitychange`, `pageshow`): a page in the back/forward cache holds
 * no connection, and there is no `unload` listener to keep it out of that cache. A stream whose
 * lifetime is over (its last event is `renew`) is opened again at once, from the last id, before
 * its end can show as a drop: the status stays `live` unless the server now refuses it (a
 * sign-out). A stream answered by another build than the page's (a deploy happened: the old
 * server ended it, the new one answered the reconnection) says so in its first event, before any
 * of its own: the hook closes it, so the page's code never gets events of a shape it does not know
 * (an island that read a renamed field showed `undefined`, silently), and asks the boot runtime
 * to move the page to the new version, keeping what was typed. Browser-safe.
 */
import { useEffect, useRef, useState } from "react";
import { RENEW_EVENT } from "./stream_renew.ts";
import { BUILD_EVENT, BUILD_META, OUTDATED_EVENT } from "./versions.ts";

/** How long a connection stays open before it counts as healthy (`retry.steadyMs`). */
const STEADY_MS = 5_000;

/**
 * Where an island's event stream is: `connecting` (opening, the first time or after a pause),
 * `live`, `retrying` (dropped or refused, opening again after a delay), `paused` (the page is
 * hidden).
 *
 * @example
 * ```ts
 * import type { FeedStatus } from "shell/runtime";
 *
 * const label: Record<FeedStatus, string> = {
 *   connecting: "Connecting...",
 *   live: "Live",
 *   retrying: "Reconnecting...",
 *   paused: "Paused",
 * };
 * ```
 * @see docs/data.md - A live page
 */
export type FeedStatus = "connecting" | "live" | "retrying" | "paused";

/**
 * `useFeed`'s options: where the page is in the stream, what to do with each type of event, and
 * how to back off.
 *
 * @example
 * ```ts
 * import type { UseFeedOptions } from "shell/runtime";
 *
 * const options: UseFeedOptions = {
 *   since: 41,
 *   on: { entry: (event) => console.log(JSON.parse(event.data)) },
 *   retry: { firstMs: 500, maxMs: 60_000, steadyMs: 5_000 },
 * };
 * ```
 * @see docs/data.md - A live page
 */
export interface UseFeedOptions {
  /** The last event id the page has (its newest item's, its snapshot's number): `?since=`. */
  since?: string | number;
  /** A handler for each type of event (`event:` in the stream); the latest render's are called. */
  on: Record<string, (event: MessageEvent<string>) => void>;
  /**
   * The delays before opening a refused or failing stream again: `firstMs` (1 s), doubling with
   * each try in a row that fails to `maxMs` (30 s), jittered. A try fails when it is refused or
   * ends before it stayed open `steadyMs` (5 s), whatever events it delivered.
   */
  retry?: { firstMs?: number; maxMs?: number; steadyMs?: number };
}

/**
 * Follows the server-sent events at `url` while the page is shown: calls `on[type]` for each
 * event, reconnects with a capped, jittered backoff (a stream that ends before it stayed open 5 s
 * counts as a failed try, whatever events it delivered), resumes from the last event id after a
 * drop or a pause (`Last-Event-ID`, `?since=`), and holds no connection while the page is hidden or
 * in the back/forward cache. `null` follows nothing.
 *
 * @param url The stream (`/board/events`), relative to the page.
 * @param options The last id the page has, the handlers by event type, the backoff.
 * @returns Where the stream is.
 *
 * @example
 * ```tsx
 * // islands/Latest.tsx
 * import { useState } from "react";
 * import { useFeed } from "shell/runtime";
 *
 * type Entry = { id: number; message: string };
 *
 * export default function Latest({ entries }: { entries: Entry[] }) {
 *   const [shown, setShown] = useState(entries);
 *   const status = useFeed("/guestbook/events", {
 *     since: entries[0]?.id ?? 0,
 *     on: { entry: (event) => setShown((all) => [JSON.parse(event.data), ...all]) },
 *   });
 *   return (
 *     <ul aria-busy={status !== "live"}>
 *       {shown.map((entry) => <li key={entry.id}>{entry.message}</li>)}
 *     </ul>
 *   );
 * }
 * ```
 * @see docs/data.md - A live page
 */
export function useFeed(url: string | null, { since, on, retry = {} }: UseFeedOptions): FeedStatus {
  const [status, setStatus] = useState<FeedStatus>("connecting");
  const handlers = useRef(on);
  useEffect(() => {
    handlers.current = on;
  });
  const { firstMs = 1_000, maxMs = 30_000, steadyMs = STEADY_MS } = retry;
  useEffect(() => {
    if (url === null) return;
    let last = since === undefined ? undefined : String(since);
    let source: EventSource | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let steady: ReturnType<typeof setTimeout> | undefined;
    // Tries in a row that failed: refused, or ended before they were healthy.
    let failures = 0;
    const close = () => {
      clearTimeout(timer);
      clearTimeout(steady);
      source?.close();
      source = undefined;
    };
    const again = () => {
      close();
      // Equal jitter: half the delay for sure, the other half at random.
      const delay = Math.min(maxMs, firstMs * 2 ** failures++) * (0.5 + Math.random() / 2);
      timer = setTimeout(open, delay);
      setStatus("retrying");
    };
    const open = () => {
      close();
      const target = new URL(url, location.href);
      if (last !== undefined) target.searchParams.set("since", last);
      const opened = source = new EventSource(target);
      // Whether this connection (the browser's own reconnection is another) proved healthy: it
      // stayed open `steadyMs`. Opening is not enough, nor is an event: a source that fails at
      // once opens and ends each time, one that sends its snapshot first delivers an event each
      // time, and counting either as health kept every page of a broken feed reopening it each
      // second for as long as it was open.
      let healthy = false;
      const healthyNow = () => {
        if (opened !== source || healthy) return;
        healthy = true;
        failures = 0;
        clearTimeout(steady);
      };
      opened.onopen = () => {
        steady = setTimeout(healthyNow, steadyMs);
        setStatus("live");
      };
      opened.onerror = () => {
        if (opened !== source) return;
        clearTimeout(steady);
        // A healthy stream that dropped gets the browser's one quick try (it sends
        // Last-Event-ID), which counts as the first of the tries in a row; refused, or ended
        // before it was healthy, it is ours to open again, later each time.
        if (opened.readyState === EventSource.CONNECTING && healthy) {
          healthy = false;
          failures = 1;
          setStatus("retrying");
        } else again();
      };
      // Sent before any event of the stream's own: another build than the page's serves it.
      opened.addEventListener(BUILD_EVENT, (event) => {
        if (opened !== source || !isOtherBuild(event.data)) return;
        close();
        setStatus("retrying");
        dispatchEvent(new CustomEvent(OUTDATED_EVENT, { detail: event.data }));
      });
      // The server ends the stream after this, by design (its lifetime is over, however short):
      // the next one opens now, with no drop shown.
      opened.addEventListener(RENEW_EVENT, () => {
        healthyNow();
        if (opened === source) open();
      });
      for (const type of Object.keys(handlers.current)) {
        opened.addEventListener(type, (event) => {
          if (opened !== source) return;
          if (event.lastEventId) last = event.lastEventId;
          handlers.current[type]?.(event);
        });
      }
    };
    const pause = () => {
      close();
      setStatus("paused");
    };
    const resume = () => {
      if (source || document.visibilityState !== "visible") return;
      clearTimeout(timer);
      setStatus("connecting");
      open();
    };
    const onVisibility = () => document.visibilityState === "visible" ? resume() : pause();
    document.addEventListener("visibilitychange", onVisibility);
    addEventListener("pagehide", pause);
    addEventListener("pageshow", resume);
    if (document.visibilityState === "visible") open();
    else setStatus("paused");
    return () => {
      document.removeEventListener("visibilitychange", onVisibility);
      removeEventListener("pagehide", pause);
      removeEventListener("pageshow", resume);
      close();
    };
    // `since` is where the page starts: later renders do not move it (the stream does).
  }, [url, firstMs, maxMs, steadyMs]);
  return status;
}

/** Whether `served` names another build than the page's (a page without one knows of none). */
function isOtherBuild(served: string): boolean {
  const page = document.querySelector<HTMLMetaElement>(`meta[name="${BUILD_META}"]`)?.content;
  return !!served && !!page && served !== page;
}
