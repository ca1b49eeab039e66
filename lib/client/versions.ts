/**
 * @module
 * Which build the page is, and whether another serves now (`shared/versions.ts`). The page's
 * build is its `<meta name="app-build">`, read once (a failure screen may replace the document).
 * Another build is noticed from every action's answer (`App-Build`) and kept in the tab's
 * `sessionStorage`: a page the back button brings back from one of the browser's caches then
 * reloads to the new version instead of running old code (a link's navigation loads the new one
 * anyway). It
 * is asked for (`GET /_build`) only when an island broke, to tell a page that is out of date from
 * one that is broken. Moving an out-of-date page to the new build, keeping what was typed, is
 * `stale.ts`'s, which comes with the action client, loaded only then or after such a move.
 */
import { BUILD_META, BUILD_PATH } from "../shared/versions.ts";

const SERVED = "app-build-served";
/** Where `stale.ts` keeps a page's input across the reload. */
export const KEPT = "app-kept-input";

let page: string | undefined;

/**
 * The build that rendered this page, read once (the boot runtime reads it as it starts); none
 * before builds were named. Nothing here runs as the module loads: the test kit imports the action
 * client, and this with it, outside a browser.
 */
export function pageBuild(): string | undefined {
  return page ??= document.querySelector<HTMLMetaElement>(`meta[name="${BUILD_META}"]`)?.content;
}

/** Notes the build that answered a request of this page's. */
export function noteServedBuild(build: string | null | undefined): void {
  try {
    if (build) sessionStorage.setItem(SERVED, build);
  } catch { /* storage off: nothing is noted */ }
}

/** Whether another build than the page's is known to serve. */
function outdated(): boolean {
  let served: string | null = null;
  try {
    served = sessionStorage.getItem(SERVED);
  } catch { /* storage off: nothing known */ }
  return !!served && !!pageBuild() && served !== pageBuild();
}

/**
 * Whether the server says another build than the page's serves now (a failed question is no
 * answer: then the page is not known to be out of date).
 */
export function isOutOfDate(): Promise<boolean> {
  return fetch(BUILD_PATH, { cache: "no-store" })
    .then((response) => response.ok ? response.text() : "")
    .then((served) => !!served && !!pageBuild() && served !== pageBuild(), () => false);
}

/**
 * This page's build is the one serving, as far as the tab knows - unless the browser brought the
 * page back (back, forward) while another is known to serve: from its HTTP cache, in which case
 * it reloads now (returning true: nothing else should start), or from its back-forward cache,
 * whenever that happens.
 */
export function followNewerBuilds(): boolean {
  addEventListener("pageshow", (event) => {
    if (event.persisted && outdated()) location.reload();
  });
  const [navigation] = performance.getEntriesByType("navigation") as PerformanceNavigationTiming[];
  if (navigation?.type !== "back_forward") noteServedBuild(pageBuild());
  else if (outdated()) {
    location.reload();
    return true;
  }
  return false;
}
