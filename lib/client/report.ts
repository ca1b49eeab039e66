/**
 * @module
 * Where the browser runtime reports errors. Errors wait in a queue until an error reporter (the
 * Sentry browser SDK, loaded off the critical path) takes them, so none is lost before it loads.
 */

export interface ErrorReport {
  error: unknown;
  /** What happened: "island-load", "hydration", "render", "event-handler", ... */
  kind: string;
  /** Replaced the page with the client-side failure screen. */
  fatal: boolean;
  /** Replaced only a `<Contained>` part of the page with its fallback. */
  contained?: boolean;
  /** The island that broke (its name, `Counter` for `islands/Counter.tsx`), when one did. */
  island?: string;
}

type Reporter = (report: ErrorReport) => void;

const queue: ErrorReport[] = [];
let reporter: Reporter | undefined;

export function reportError(report: ErrorReport): void {
  if (reporter) reporter(report);
  else queue.push(report);
}

/** Installs the reporter and hands it every report made so far. */
export function setReporter(next: Reporter): void {
  reporter = next;
  for (const report of queue.splice(0)) next(report);
}
