/**
 * @module
 * Which build the page is, and whether another serves now (`shared/versions.ts`). The page's
 * build is its `<meta name="app-build">`, read once (a failure screen may replace the document).
 * Another build is noticed from every action's answer (`App-Build`) and kept in the tab's
 * `sessionStorage`: a page the back button brings back from one of the browser's caches then
 * reloads to the new version instead of running old code (a link's navigation loads the new one
 * anyway). It
 * is asked for (`GET /_build`) only when an island broke, to tell a page that is out of date from
 * one that is broken.
 */
import { BUILD_META, BUILD_PATH } from "../shared/versions.ts";

const SERVED = "app-build-served";

let page: string | null | undefined;

/** The build that rendered this page; none on a page from before builds were named. */
export function pageBuild(): string | null {
  return page ??= document.querySelector<HTMLMetaElement>(`meta[name="${BUILD_META}"]`)
    ?.content ?? null;
}

/** Notes the build that answered a request of this page's. */
export function noteServedBuild(build: string | null): void {
  if (!build) return;
  try {
    sessionStorage.setItem(SERVED, build);
  } catch { /* storage off: nothing is noted */ }
}

function servedBuild(): string | null {
  try {
    return sessionStorage.getItem(SERVED);
  } catch {
    return null;
  }
}

/**
 * Whether another build than the page's serves now: as noted, or as the server says (a failed
 * question is no answer: then the page is not known to be out of date).
 */
export async function isOutOfDate(): Promise<boolean> {
  const own = pageBuild();
  if (!own) return false;
  try {
    const response = await fetch(BUILD_PATH, { cache: "no-store" });
    const served = response.ok ? (await response.text()).trim() : servedBuild();
    noteServedBuild(served);
    return served !== null && served !== own;
  } catch {
    return false;
  }
}

/**
 * This page's build is the one serving, as far as the tab knows — unless the browser brought the
 * page back (back, forward) while another is known to serve: from its HTTP cache, in which case
 * it reloads now (returning true: nothing else should start), or from its back-forward cache,
 * whenever that happens.
 */
export function followNewerBuilds(): boolean {
  const own = pageBuild();
  if (!own) return false;
  const outdated = () => {
    const served = servedBuild();
    return served !== null && served !== own;
  };
  addEventListener("pageshow", (event) => {
    if (event.persisted && outdated()) location.reload();
  });
  const [navigation] = performance.getEntriesByType("navigation") as PerformanceNavigationTiming[];
  if (navigation?.type !== "back_forward") {
    noteServedBuild(own);
    return false;
  }
  if (!outdated()) return false;
  location.reload();
  return true;
}
