/**
 * @module
 * What the browser runtime does with an error. One that breaks the page while it loads (an
 * island's chunk fails to load, hydration or render throws) replaces the whole page with the
 * client-side screen, so the user never acts on a half-working page. One after that, in an event
 * handler, leaves the page as it is, as in React and Next.js. Both are logged and reported. An
 * island inside a `<Contained>` part (`shared/contained.ts`) that breaks takes only that part
 * down, to its fallback.
 */
import { FAILURE_ATTRIBUTE, screenMarkup } from "../errors/screen.ts";
import { CONTAINED_ELEMENT, FALLBACK_ATTRIBUTE } from "../shared/contained.ts";
import { reportError } from "./report.ts";

// esbuild writes the build's mode in here: a development build shows what broke on the screen.
const dev = process.env.NODE_ENV === "development";

/**
 * A fatal error: the page gives way to the client-side screen - or the server-side one, with its
 * digest, when the error is a server failure met in the browser (a server action's).
 */
function failPage(kind: string, island?: string): (error: unknown) => void {
  return (error) => {
    console.error(error);
    reportError({ error, kind, fatal: true, ...island && { island } });
    const root = document.documentElement;
    // A failure screen already shows; a server one carries the digest, which must stay in view.
    if (root.hasAttribute(FAILURE_ATTRIBUTE)) return;
    const digest = serverDigestOf(error);
    root.setAttribute(FAILURE_ATTRIBUTE, digest === undefined ? "client" : "server");
    const details = dev ? (error instanceof Error && error.stack) || String(error) : undefined;
    root.innerHTML = screenMarkup({ host: location.hostname, digest, details });
  };
}

/** A part that gave way to its fallback: an island of the fallback that fails goes further out. */
const FAILED_PART = "data-failed";

/**
 * A fatal error of `island`: the `<Contained>` part around it, if any, gives way to its fallback
 * (logged and reported, not fatal); without one, the page does (`failPage`).
 */
export function failIsland(island: Element, kind: string): (error: unknown) => void {
  return (error) => {
    // Which island broke: the stack names only its hashed chunk, and only once the maps are in.
    const name = island.getAttribute("name") ?? undefined;
    const part = island.closest(`${CONTAINED_ELEMENT}:not([${FAILED_PART}])`);
    const fallback = part?.querySelector<HTMLTemplateElement>(
      `:scope > template[${FALLBACK_ATTRIBUTE}]`,
    );
    if (!part || !fallback) return failPage(kind, name)(error);
    console.error(error);
    reportError({ error, kind, fatal: false, contained: true, island: name });
    part.setAttribute(FAILED_PART, "");
    part.replaceChildren(fallback.content.cloneNode(true));
  };
}

function serverDigestOf(error: unknown): string | undefined {
  const digest = (error as { digest?: unknown } | null)?.digest;
  return typeof digest === "string" ? digest : undefined;
}

/** An error the page survives (React recovered, an error boundary caught it): logged, reported. */
export function reportPageError(kind: string): (error: unknown) => void {
  return (error) => {
    console.error(error);
    reportError({ error, kind, fatal: false });
  };
}

/**
 * Reports what nothing else catches - errors in event handlers, timers and forgotten promises -
 * without touching the page. The browser has already logged them to the console.
 */
export function reportUncaughtErrors(): void {
  addEventListener("error", (event) => {
    reportError({ error: event.error ?? event.message, kind: "uncaught", fatal: false });
  });
  addEventListener("unhandledrejection", (event) => {
    reportError({ error: event.reason, kind: "unhandled-rejection", fatal: false });
  });
}
