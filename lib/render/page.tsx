/**
 * @module
 * Renders a page to a streamed response with React's `renderToReadableStream`: `_app`, layouts
 * and page, their stylesheets linked first, with the request's CSP nonce on every inline script
 * React emits. The promise settles
 * once the shell is ready, so a failure or `notFound()` before it still decides the status; what
 * fails after it (inside a Suspense boundary) is handed to `onStreamError`.
 */
import type { ComponentType, ReactNode } from "react";
import { renderToReadableStream } from "react-dom/server";
// React's own `jsx`, not ours: these are no islands.
import { jsx } from "react/jsx-runtime";
import type { ReactFormState as FormState } from "react-dom/client";
import type { Deadline, DeadlineClock } from "../server/deadline.ts";
import type { InFlight } from "../server/in_flight.ts";
import type { ComponentModule } from "../server/manifest.ts";
import type { LayoutProps, PageProps } from "../server/types.ts";
import { RenderContext, type RenderContextValue } from "./context.ts";
import { Stylesheets } from "./styles.ts";
import { type BoundaryFailure, BoundaryWatch } from "./stream_failure.ts";
import { IslandsHead } from "./islands_head.ts";

export interface PageTree {
  app?: ComponentModule;
  layouts: ComponentModule[];
  // deno-lint-ignore no-explicit-any -- a page's or an error page's props
  page: ComponentType<any>;
  /** The stylesheets of `_app`, the layouts and the page, in order (the build's list). */
  styles?: readonly string[];
}

export interface RenderOptions {
  context: RenderContextValue;
  props: PageProps<unknown>;
  /** Props for the page only, beside `props`: an error page's `status` and `message`. */
  pageProps?: Record<string, unknown>;
  status: number;
  /** Headers the handler added (`RenderInit`): `Content-Type` set on them. */
  headers?: HeadersInit;
  signal: AbortSignal;
  /** Aborts the render when the request's deadline passes (see deadline.ts). */
  deadline?: Deadline;
  /** Gives what streams after the shell a deadline of its own. */
  clock: DeadlineClock;
  /** Where the render counts as in flight until React has rendered all of it. */
  inFlight?: InFlight;
  /** Extra elements for the document (meta tags): React hoists them into `<head>`. */
  head?: ReactNode;
  /**
   * HTML's bytes only a page where an island renders needs (`Telemetry.head`): asked once, by such a page
   * alone, and written before the island runtime's script (islands_head.ts).
   */
  islandsHead?: () => Uint8Array | undefined;
  /** What a form posted just before returned, for its `useActionState` (see actions/). */
  formState?: FormState;
  /** Called for a Suspense boundary that failed; says what ends the stream. */
  onStreamError?: (error: unknown) => BoundaryFailure;
}

function DefaultApp({ Component }: { Component: ComponentType }) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
      </head>
      <body>
        <Component />
      </body>
    </html>
  );
}

/** App -> outermost layout -> ... -> page, each receiving the next as `Component`. */
function compose(
  tree: PageTree,
  props: PageProps<unknown>,
  pageProps: Record<string, unknown> | undefined,
  head: ReactNode,
): ReactNode {
  const Page = tree.page;
  const ofPage = pageProps ? { ...props, ...pageProps } : props;
  let Inner: ComponentType = () => jsx(Page, ofPage);
  for (let i = tree.layouts.length - 1; i >= 0; i--) {
    const Layout = tree.layouts[i].default;
    const layoutProps: LayoutProps<unknown> = { ...props, Component: Inner };
    Inner = () => jsx(Layout, layoutProps);
  }
  const App = tree.app?.default ?? DefaultApp;
  const Body = Inner;
  // Always there, even with no head: React keys a form's `useActionState` by its place in the
  // tree, so the page that shows a form's state must have the shape of the one that posted it.
  const WithHead: ComponentType = () => (
    <>
      {head}
      <Body />
    </>
  );
  return jsx(App, { ...props, Component: WithHead });
}

export async function renderPage(tree: PageTree, options: RenderOptions): Promise<Response> {
  const element = (
    <RenderContext value={options.context}>
      <Stylesheets hrefs={tree.styles} />
      {compose(tree, options.props, options.pageProps, options.head)}
    </RenderContext>
  );
  // A failure before the shell is ready (in it, or in a Suspense boundary) rejects this promise
  // and is the caller's to answer; one after goes to `onStreamError` (see stream_failure.ts).
  const watch = options.onStreamError &&
    new BoundaryWatch(options.signal, options.onStreamError, options.deadline, options.clock);
  const stream = await renderToReadableStream(element, {
    nonce: options.context.nonce,
    signal: watch?.signal ?? options.signal,
    onError: watch?.onError,
    formState: options.formState,
  });
  // Whether React has already rendered everything (no Suspense boundary left waiting): a settled
  // `allReady`'s reaction runs ahead of the await below. `allReady` rejects when the render is
  // aborted; that outcome is handled through `onError`.
  let complete = false;
  const allReady = stream.allReady.then(() => {
    complete = true;
  }, () => {});
  options.inFlight?.hold(allReady);
  await undefined;
  // Islands to come, or rendered in the shell (a fallback's too): the page runs JavaScript.
  const { context } = options;
  const head = options.islandsHead && (context.islands || !complete)
    ? new IslandsHead(options.islandsHead, context)
    : undefined;
  const tail = watch?.shellReady(complete, allReady, head);
  // All of a page React has finished is there at once: read whole, it gets the tags for a copy,
  // where a stream through them cost some 20 KB of garbage a request (docs/performance.md, fix36).
  const body = tail
    ? stream.pipeThrough(tail)
    : head
    ? head.into(await new Response(stream).bytes())
    : stream;
  // Headers set on the response it made, not handed to its constructor, which converts and
  // copies them again (twice the CPU, measured: docs/performance.md).
  const res = new Response(body, { status: options.status });
  const { headers } = res;
  if (options.headers) {
    for (const [name, value] of new Headers(options.headers)) headers.append(name, value);
  }
  headers.set("Content-Type", "text/html; charset=utf-8");
  return res;
}

/**
 * `element` alone as HTML, once all of it is ready (an error page shown in place of a Suspense
 * boundary): with the page's render context, so islands in it work as on a page.
 */
export async function renderMarkup(
  element: ReactNode,
  context: RenderContextValue,
  signal: AbortSignal,
): Promise<string> {
  const stream = await renderToReadableStream(
    <RenderContext value={context}>{element}</RenderContext>,
    { nonce: context.nonce, signal },
  );
  await stream.allReady;
  return await new Response(stream).text();
}
