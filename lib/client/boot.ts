/**
 * @module
 * The browser runtime, loaded only by pages with islands. `<app-island>` is a custom element:
 * once its server HTML is complete it imports the island's chunk, decodes the props and hydrates
 * with `hydrateRoot`. Server-rendered children are kept as they are.
 */
import { createElement } from "react";
import { hydrateRoot } from "react-dom/client";
import { deserializeProps } from "../props.ts";
import { showClientFailure } from "./failure.ts";

const CONTENTS = { display: "contents" };

class AppIsland extends HTMLElement {
  #started = false;

  connectedCallback() {
    if (this.#started) return; // moved into place by a streamed Suspense boundary
    this.#started = true;
    whenParsed(this).then(() => this.#hydrate()).catch(showClientFailure);
  }

  async #hydrate() {
    const module = await import(this.getAttribute("src")!);
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
      onUncaughtError: showClientFailure,
      onCaughtError: (error) => console.error(error),
      onRecoverableError: (error) => console.error(error),
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

customElements.define("app-island", AppIsland);
