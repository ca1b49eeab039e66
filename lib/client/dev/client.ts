/**
 * @module
 * Dev only: the script `deno task dev` adds to every page it serves, as
 * `/_app/dev/client.js?session=...&version=...` (the dev server's session and the version of the
 * code that made the page). It listens to the dev server's events (`protocol.ts`) and
 *   - `update`: imports each rebuilt island chunk the page shows (a new, content-hashed URL; shared
 *     chunks and React keep theirs, and their instances) and has React Refresh swap the components
 *     in place, state kept - or reloads when the edit cannot be applied so (`cannotRefresh`);
 *   - `css`: swaps the stylesheets for fresh copies (the rebuilt ones the app imports for their new
 *     URLs), no reload;
 *   - `reload`: reloads (a route or server module changed and the new server is up);
 *   - `build-error` / `built`: shows the build's error over the page, which keeps its state, and
 *     takes it away once a build succeeds;
 *   - `hello`, on every (re)connection: a new session, or changes the page missed, reload it.
 * The stream is closed on `pagehide` and opened again on `pageshow`, so pages stay eligible for the
 * back/forward cache in dev too.
 * It talks to the refresh runtime through the `__REFRESH__` global (`refresh_setup.ts`), and shows
 * browser errors at their sources (`errors.ts`).
 */
import type {} from "./refresh_setup.ts";
import { showErrorsAtSource } from "./errors.ts";
import { hideOverlay, showOverlay } from "./overlay.ts";
import type { BuildError, CssSwap, Hello, Reload, Update } from "./protocol.ts";
import { EVENTS_PATH } from "./protocol.ts";

const params = new URL(import.meta.url).searchParams;
const session = params.get("session");
let version = Number(params.get("version"));
let styles = Number(params.get("styles"));
/** Updates apply one at a time, in order. */
let queue = Promise.resolve();

showErrorsAtSource();

let events = connect();
// The back/forward cache keeps no page holding a connection: closed as the page leaves, opened
// again when it comes back, whose `hello` reloads it if the code changed meanwhile.
addEventListener("pagehide", () => events.close());
addEventListener("pageshow", (event) => {
  if (event.persisted) events = connect();
});

function connect(): EventSource {
  const source = new EventSource(EVENTS_PATH);
  source.addEventListener("hello", (event) => {
    const hello: Hello = JSON.parse(event.data);
    if (hello.session !== session) return reload("the dev server restarted");
    if (hello.version > version) return reload("the code changed while the page loaded");
    // A stylesheet changed while the page loaded: which one is not known, so every one is fetched.
    if (hello.styles > styles) swapStylesheets("all", {}, hello.styles);
    if (hello.error) showOverlay(hello.error);
    else hideOverlay();
  });
  source.addEventListener("reload", (event) => reload((JSON.parse(event.data) as Reload).why));
  source.addEventListener("build-error", (event) => {
    showOverlay((JSON.parse(event.data) as BuildError).text);
  });
  source.addEventListener("built", () => hideOverlay());
  source.addEventListener("css", (event) => {
    const swap: CssSwap = JSON.parse(event.data);
    if (swap.version !== undefined) version = Math.max(version, swap.version);
    swapStylesheets(swap.hrefs, swap.moved, swap.styles);
  });
  source.addEventListener("update", (event) => {
    const update: Update = JSON.parse(event.data);
    queue = queue.then(() => applyUpdate(update)).catch((error) => {
      console.error("[dev] the hot update failed:", error);
      reload("the hot update failed");
    });
  });
  return source;
}

function reload(why: string) {
  console.info(`[dev] reloading: ${why}`);
  events.close();
  location.reload();
}

async function applyUpdate(update: Update) {
  version = update.version;
  // The failure screen took the islands' place: nothing is left to refresh.
  if (document.documentElement.hasAttribute("data-failure")) return reload("the page had failed");
  const shown = Object.entries(update.islands).filter(([name]) => elementsOf(name).length > 0);
  if (shown.length === 0) return;
  __REFRESH__.beginUpdate();
  await Promise.all(shown.map(([, { url }]) => import(url)));
  const why = cannotRefresh(new Set(shown.flatMap(([, { files }]) => files)));
  if (why) return reload(why);
  __REFRESH__.runtime.performReactRefresh();
  // Islands streamed in later load the new chunk.
  for (const [name, { url }] of shown) {
    for (const el of elementsOf(name)) el.setAttribute("src", url);
  }
  console.info(`[dev] updated ${shown.map(([name]) => name).join(", ")}`);
}

/** Why the changed files cannot be swapped in place, if they cannot. */
function cannotRefresh(files: Set<string>): string | undefined {
  for (const file of files) {
    const evaluation = __REFRESH__.evaluations.get(file);
    if (!evaluation) return `${file} is not a component module`;
    if (!evaluation.boundary) {
      return `${file} exports more than components (${evaluation.nonComponents.join(", ")})`;
    }
    if (evaluation.signaturesChanged) return `${file} changed its hooks`;
  }
}

function elementsOf(island: string) {
  return document.querySelectorAll(`app-island[name="${CSS.escape(island)}"]`);
}

/** Swaps the stylesheets at `hrefs` (paths, or all of this origin's) and those `moved`. */
function swapStylesheets(hrefs: string[] | "all", moved: Record<string, string>, swaps: number) {
  styles = Math.max(styles, swaps);
  for (const link of document.querySelectorAll<HTMLLinkElement>("link[rel=stylesheet]")) {
    const url = new URL(link.href);
    if (url.origin !== location.origin) continue;
    const to = moved[url.pathname];
    if (to !== undefined) replace(link, new URL(to, url).href);
    else if (hrefs === "all" || hrefs.includes(url.pathname)) {
      url.searchParams.set("v", String(Date.now()));
      replace(link, url.href);
    }
  }
}

/** The old sheet stays until the new one has loaded: no flash of unstyled content. */
function replace(link: HTMLLinkElement, href: string) {
  const next = link.cloneNode() as HTMLLinkElement;
  next.href = href;
  next.addEventListener("load", () => link.remove(), { once: true });
  next.addEventListener("error", () => next.remove(), { once: true });
  link.after(next);
}
