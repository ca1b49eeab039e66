/**
 * @module
 * Dev only: browser errors at their sources. Chromium leaves bundle positions in `error.stack`
 * (`/_app/Counter-X.js:56:9`) and applies source maps only in an open DevTools, so the stack goes
 * to `deno task dev`, which holds the build's maps, and comes back as `islands/Counter.tsx:29:9`:
 * on the failure screen, in place of the bundle's stack it shows first, and in the console, for it
 * and for errors the page survives (an event handler's, a forgotten promise's).
 */
import { STACK_PATH } from "./protocol.ts";

export function showErrorsAtSource(): void {
  const root = document.documentElement;
  // The screen may be up before this module ran: the page failed while it loaded.
  if (root.hasAttribute("data-failure")) mapScreen();
  else {
    const observer = new MutationObserver(() => {
      if (!root.hasAttribute("data-failure")) return;
      observer.disconnect();
      mapScreen();
    });
    observer.observe(root, { attributeFilter: ["data-failure"] });
  }
  addEventListener("error", (event) => log("uncaught error", event.error));
  addEventListener("unhandledrejection", (event) => log("unhandled rejection", event.reason));
}

async function mapScreen() {
  const details = document.querySelector("html[data-failure] main pre");
  const stack = details?.textContent;
  if (!details || !stack) return; // a production build's screen: no stack to map
  const mapped = await atSource(stack);
  if (!mapped) return;
  details.textContent = mapped;
  console.error(`[dev] the page failed, at its source:\n${mapped}`);
}

async function log(what: string, error: unknown) {
  const stack = error instanceof Error ? error.stack : undefined;
  const mapped = stack && await atSource(stack);
  if (mapped) console.error(`[dev] ${what}, at its source:\n${mapped}`);
}

async function atSource(stack: string): Promise<string | undefined> {
  try {
    const res = await fetch(STACK_PATH, { method: "POST", body: stack });
    return res.ok ? await res.text() : undefined;
  } catch {
    return undefined; // the dev server is restarting: the bundle's stack stays
  }
}
