/**
 * @module
 * `useFeed(url, { since, on })`: an island's end of a server's event stream (`eventStream`,
 * `changeStream`), so no island writes `EventSource` code of its own. It opens the stream after
 * hydration with `?since=` the last event id the page has; when the stream drops, the browser's
 * own reconnection gets one quick try (it sends `Last-Event-ID`, and the server sends what was
 * missed); after that, or when the server refused the stream (a 503, a deploy), the hook opens it
 * again itself, backing off - growing, capped, jittered, so that a thousand pages do not come back
 * in the same second - with `?since=` the last id it got. A hidden page holds no stream: it closes
 * on `visibilitychange` (hidden) and `pagehide`, and opens again, from where it was, when the page
 * is shown (`visibilitychange`, `pageshow`): a page in the back/forward cache holds no connection,
 * and there is no `unload` listener to keep it out of that cache. A stream whose lifetime is over
 * (its last event is `renew`) is opened again at once, from the last id, before its end can show
 * as a drop: the status stays `live` unless the server now refuses it (a sign-out). Browser-safe.
 */
import { useEffect, useRef, useState } from "react";
import { RENEW_EVENT } from "./stream_renew.ts";

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
 *   retry: { firstMs: 500, maxMs: 60_000 },
 * };
 * ```
 * @see docs/data.md - A live page
 */
export interface UseFeedOptions {
  /** The last event id the page has (its newest item's, its snapshot's number): `?since=`. */
  since?: string | number;
  /** A handler for each type of event (`event:` in the stream); the latest render's are called. */
  on: Record<string, (event: MessageEvent<string>) => void>;
  /** The delays before opening a refused or lost stream again: `firstMs` (1 s), doubling to `maxMs` (30 s), jittered. */
  retry?: { firstMs?: number; maxMs?: number };
}

/**
 * Follows the server-sent events at `url` while the page is shown: calls `on[type]` for each
 * event, reconnects with a capped, jittered backoff, resumes from the last event id after a drop
 * or a pause (`Last-Event-ID`, `?since=`), and holds no connection while the page is hidden or in
 * the back/forward cache. `null` follows nothing.
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
  const { firstMs = 1_000, maxMs = 30_000 } = retry;
  useEffect(() => {
    if (url === null) return;
    let last = since === undefined ? undefined : String(since);
    let source: EventSource | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let failures = 0;
    const close = () => {
      clearTimeout(timer);
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
      opened.onopen = () => {
        failures = 0;
        setStatus("live");
      };
      opened.onerror = () => {
        if (opened !== source) return;
        // Dropped: the browser tries once on its own, sending Last-Event-ID; refused, or dropped
        // again before it opened, it is ours to open again, later.
        if (opened.readyState === EventSource.CONNECTING && failures === 0) {
          failures = 1;
          setStatus("retrying");
        } else again();
      };
      // The server ends the stream after this: the next one opens now, with no drop shown.
      opened.addEventListener(RENEW_EVENT, () => {
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
  }, [url, firstMs, maxMs]);
  return status;
}
