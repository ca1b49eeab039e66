/**
 * @module
 * Renders a page to a streamed response with React's `renderToReadableStream`: `_app`, layouts
 * and page, with the request's CSP nonce on every inline script React emits. The promise settles
 * once the shell is ready, so a failure or `notFound()` before it still decides the status; what
 * fails after it (inside a Suspense boundary) is handed to `onStreamError`.
 */
import type { ComponentType, ReactNode } from "react";
import { renderToReadableStream } from "react-dom/server";
import type { ComponentModule } from "./manifest.ts";
import { RenderContext, type RenderContextValue } from "./render_context.ts";
import type { PageProps } from "./types.ts";

export interface PageTree {
  app?: ComponentModule;
  layouts: ComponentModule[];
  page: ComponentType<PageProps<unknown>>;
}

export interface RenderOptions {
  context: RenderContextValue;
  props: PageProps<unknown>;
  status: number;
  headers?: HeadersInit;
  signal: AbortSignal;
  /** Extra elements for the document (meta tags): React hoists them into `<head>`. */
  head?: ReactNode;
  /** Called for a failure after the shell was sent; returns HTML to append to the stream. */
  onStreamError?: (error: unknown) => string;
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

/** App → outermost layout → … → page, each receiving the next as `Component`. */
function compose(tree: PageTree, props: PageProps<unknown>, head: ReactNode): ReactNode {
  const Page = tree.page;
  let Inner: ComponentType = () => <Page {...props} />;
  for (const layout of [...tree.layouts].reverse()) {
    const Layout = layout.default;
    const Next = Inner;
    Inner = () => <Layout {...props} Component={Next} />;
  }
  const App = tree.app?.default ?? DefaultApp;
  const Body = Inner;
  const WithHead: ComponentType = head
    ? () => (
      <>
        {head}
        <Body />
      </>
    )
    : Body;
  return <App {...props} Component={WithHead} />;
}

export async function renderPage(tree: PageTree, options: RenderOptions): Promise<Response> {
  const streamErrors: unknown[] = [];
  const element = (
    <RenderContext value={options.context}>
      {compose(tree, options.props, options.head)}
    </RenderContext>
  );
  const stream = await renderToReadableStream(element, {
    nonce: options.context.nonce,
    signal: options.signal,
    // A shell failure also rejects this promise and is the caller's to handle; any other error
    // (a Suspense boundary that failed, before or after the shell was sent) is handled at the end.
    onError(error) {
      streamErrors.push(error);
    },
  });
  const onStreamError = options.onStreamError;
  const body = onStreamError
    ? stream.pipeThrough(appendOnError(streamErrors, onStreamError))
    : stream;
  const headers = new Headers(options.headers);
  headers.set("Content-Type", "text/html; charset=utf-8");
  return new Response(body, { status: options.status, headers });
}

/** Passes the stream through; once it ends, appends what `onStreamError` makes of a failure. */
function appendOnError(
  errors: unknown[],
  onStreamError: (error: unknown) => string,
): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream({
    flush(controller) {
      if (errors.length > 0) controller.enqueue(new TextEncoder().encode(onStreamError(errors[0])));
    },
  });
}
