/**
 * @module
 * The browser runtime, loaded only by pages with islands. `<app-island>` is a custom element:
 * once its server HTML is complete it imports the island's chunk, decodes the props and hydrates
 * with `hydrateRoot`. Server-rendered children are kept as they are. An island that fails to load,
 * hydrate or render takes the page down to the failure screen, or only the `<Contained>` part
 * around it (`failure.ts`).
 */
import { type ComponentType, createElement } from "react";
import { hydrateRoot } from "react-dom/client";
import { deserializeProps } from "../shared/props.ts";
import { failIsland, reportPageError, reportUncaughtErrors } from "./failure.ts";
import { pageFormState } from "./form_state.ts";
import { startSentryWhenIdle } from "./sentry_loader.ts";

const CONTENTS = { display: "contents" };

const onCaughtError = reportPageError("caught");
const onRecoverableError = reportPageError("recoverable");

class AppIsland extends HTMLElement {
  #started = false;

  connectedCallback() {
    if (this.#started) return; // moved into place by a streamed Suspense boundary
    this.#started = true;
    whenParsed(this)
      .then(() => import(this.getAttribute("src")!))
      .then((module) => this.#hydrate(module), failIsland(this, "island-load"))
      .catch(failIsland(this, "hydration"));
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
    hydrateRoot(this, createElement(module.default, props), {
      onUncaughtError: failIsland(this, "render"),
      onCaughtError,
      onRecoverableError,
      formState: pageFormState(),
    });
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
customElements.define("app-island", AppIsland);
startSentryWhenIdle();
