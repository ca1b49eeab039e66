/**
 * @module
 * The browser runtime, loaded only by pages with islands. `<app-island>` is a custom element:
 * once its server HTML is complete it imports the island's chunk, decodes the props and hydrates
 * with `hydrateRoot`. Server-rendered children are kept as they are. An island that fails to load,
 * hydrate or render takes the page down to the failure screen, or only the `<Contained>` part
 * around it (`failure.ts`) - unless the page is older than the build serving now: then it reloads
 * to the new version, keeping what the user changed (`stale.ts`), since a deploy is no failure;
 * so does a page whose island's event stream is answered by another build (`useFeed`). The page
 * notes from the start which fields the user changes (`touched.ts`), puts back what a reload for
 * that reason kept, keys forms it posts itself once per submission (`submission_key.ts`), and
 * follows newer builds (`versions.ts`).
 */
import { type ComponentType, createElement } from "react";
import { hydrateRoot } from "react-dom/client";
import { deserializeProps } from "../shared/props.ts";
import { failIsland, reportPageError, reportUncaughtErrors } from "./failure.ts";
import { pageFormState } from "./form_state.ts";
import { startSentryWhenIdle } from "./sentry_loader.ts";
import type { Notice } from "./stale.ts";
import { keySubmissions } from "./submission_key.ts";
import { watchTouched } from "./touched.ts";
import { UNKEPT_FIELD } from "../shared/kept_input.ts";
import { OUTDATED_EVENT } from "../shared/versions.ts";
import { followNewerBuilds, isOutOfDate, KEPT, noteServedBuild } from "./versions.ts";

const CONTENTS = { display: "contents" };
/**
 * Islands' chunks being fetched: the Sentry SDK waits for them (never ahead of the page's code).
 */
const loading = new Set<Promise<unknown>>();

const onCaughtError = reportPageError("caught");
const onRecoverableError = reportPageError("recoverable");

class AppIsland extends HTMLElement {
  #started = false;

  connectedCallback() {
    if (this.#started) return; // moved into place by a streamed Suspense boundary
    this.#started = true;
    const chunk = whenParsed(this).then(() => import(this.getAttribute("src")!));
    loading.add(chunk);
    chunk.finally(() => loading.delete(chunk)).catch(() => {});
    chunk
      .then((module) => this.#hydrate(module), failOrReload(this, "island-load"))
      .catch(failOrReload(this, "hydration"));
  }

  #hydrate(module: { default: ComponentType }) {
    if (!this.isConnected) return; // the page gave way to a failure screen meanwhile
    const props = deserializeProps(this.getAttribute("props")!);
    const children = this.querySelector(":scope island-children");
    if (children) {
      props.children = createElement("island-children", {
        style: CONTENTS,
        dangerouslySetInnerHTML: { __html: children.innerHTML },
        suppressHydrationWarning: true,
      });
    }
    // React skips hidden inputs it did not render only inside an element: at an island's root it
    // would take the server's mark before a field never kept (`jsx/kept_field.ts`) for the field
    // itself. The marks move out, before the island - in the same form still.
    for (const mark of this.querySelectorAll(`:scope > input[name="${UNKEPT_FIELD}"]`)) {
      this.before(mark);
    }
    hydrateRoot(this, createElement(module.default, props), {
      onUncaughtError: failOrReload(this, "render", removedContent(this)),
      onCaughtError,
      onRecoverableError,
      formState: pageFormState(),
    });
  }
}

/**
 * What breaks an island: on a page older than the build serving now - its chunk gone, its code at
 * odds with what the new server answers (an action's client gone, say) - a reload to the new
 * version; on the build serving now, a failure (`failIsland`).
 */
function failOrReload(
  island: Element,
  kind: string,
  removed?: () => Node[],
): (error: unknown) => void {
  const fail = failIsland(island, kind);
  return (error) => {
    const content = removed?.() ?? [];
    isOutOfDate().then((stale) => {
      if (!stale) return fail(error);
      console.warn(`An island of this page broke (${kind}), and a newer build serves: reloading.`);
      if (!island.hasChildNodes()) island.append(...content);
      // What breaks as it renders is mostly what the new server answered the user: the page says
      // to check it (it may have run). A chunk gone or a hydration at odds lost nothing.
      moveToNewBuild(kind === "render" ? "unsure" : undefined);
    });
  };
}

/**
 * What React took out of `island` in the commit under way, read when it reports an uncaught error
 * (in that commit). It unmounts an island whose render throws, and the fields the user typed into
 * with it: put back before the page moves to a new build, their values are kept (and the island
 * does not blank meanwhile).
 */
function removedContent(island: Element): () => Node[] {
  const observer = new MutationObserver(() => {}); // records are read only then
  observer.observe(island, { childList: true });
  return () => observer.takeRecords().flatMap((record) => [...record.removedNodes]);
}

// esbuild writes the URL of the action client's own bundle in here (see `build/bundle.ts`).
declare const ACTION_CLIENT_URL: string;
type ActionClient = typeof import("./action_client.ts");

/**
 * Reloads the page to the build serving now, keeping what its fields hold (`stale.ts`, in the
 * action client's bundle); a plain reload if that cannot load (gone with the old build's files).
 */
function moveToNewBuild(notice?: Notice): void {
  import(ACTION_CLIENT_URL).then(
    (client: ActionClient) => client.reloadKeepingInput({ notice }),
    () => location.reload(),
  );
}

/** After such a move, the new page gets back what was kept: only then is the client loaded. */
function restoreAfterMove(): void {
  let kept: string | null = null;
  try {
    kept = sessionStorage.getItem(KEPT);
  } catch { /* storage off: nothing was kept */ }
  if (kept !== null) {
    import(ACTION_CLIENT_URL).then((client: ActionClient) => client.restoreKeptInput());
  }
}

/** Resolves once the parser has closed `el`, so hydration sees all of its server HTML. */
function whenParsed(el: Element): Promise<void> {
  const closed = () => {
    if (document.readyState !== "loading") return true;
    for (let node: Node | null = el; node; node = node.parentNode) {
      if (node.nextSibling) return true;
    }
    return false;
  };
  if (closed()) return Promise.resolve();
  return new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (!closed()) return;
      observer.disconnect();
      resolve();
    });
    observer.observe(document, { childList: true, subtree: true });
    document.addEventListener("DOMContentLoaded", () => {
      observer.disconnect();
      resolve();
    }, { once: true });
  });
}

reportUncaughtErrors();
// An old page the back button brought back from the HTTP cache reloads at once: nothing to start.
if (!followNewerBuilds()) {
  watchTouched();
  keySubmissions();
  restoreAfterMove();
  // An island's event stream found another build serving (`useFeed`): the page moves to it.
  addEventListener(OUTDATED_EVENT, (event) => {
    noteServedBuild((event as CustomEvent<string>).detail);
    moveToNewBuild();
  });
  customElements.define("app-island", AppIsland);
  startSentryWhenIdle(() => Promise.allSettled(loading));
}
