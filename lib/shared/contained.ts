/**
 * @module
 * `<Contained fallback={...}>`: a part of a page (an island, a section with islands) that fails on
 * its own. Without it, an island that breaks while loading or rendering takes the whole page down
 * to the client-side failure screen; inside it, only the part gives way to its fallback, and the
 * error is still logged to the console and reported. On the page (server-rendered around islands)
 * it is an `<app-contained>` element holding the fallback in a `<template>`, which the boot runtime
 * (`client/failure.ts`) swaps in when an island inside fails; inside an island it is a React error
 * boundary, rendered alike on the server and when hydrating. Browser-safe; no JSX here, as in
 * `islands/island.ts` (the server's JSX runtime imports that module).
 */
import { Component, createElement, type ReactNode, use } from "react";
import { InsideIsland } from "./inside_island.ts";

/** Marks the element and its fallback; the boot runtime reads these. */
export const CONTAINED_ELEMENT = "app-contained";
export const FALLBACK_ATTRIBUTE = "data-fallback";

/**
 * The props of `<Contained>`.
 *
 * @example
 * ```tsx
 * import { Contained, type ContainedProps } from "shell/runtime";
 *
 * const props: ContainedProps = { fallback: <p>The chart is unavailable.</p> };
 * export const Chart = () => <Contained {...props}><canvas /></Contained>;
 * ```
 * @see docs/failures.md
 */
export interface ContainedProps {
  /** What replaces the part when it fails: plain HTML on a page, any React node in an island. */
  fallback: ReactNode;
  /** The part: islands, or anything with islands in it. */
  children?: ReactNode;
}

/**
 * Gives a part of a page its own fallback: an island (or several) that fails after the page was
 * sent - its script does not load, hydrating or rendering it throws, an action's error nobody
 * caught - replaces only this part with `fallback`, not the whole page with the failure screen.
 * The error still goes to `console.error` and to Sentry. Use it around islands on a page, or
 * inside an island around a part of its own tree. Failures on the server are not contained: they
 * answer with the failure screen as ever.
 *
 * @example Around an island on a page
 * ```tsx
 * // routes/chat.tsx
 * import type { ComponentType } from "react";
 * import { Contained } from "shell/runtime";
 *
 * declare const Chat: ComponentType; // islands/Chat.tsx
 *
 * export default function ChatPage() {
 *   return (
 *     <>
 *       <h1>Chat</h1>
 *       <Contained fallback={<p role="status">The chat cannot start: reload the page to retry.</p>}>
 *         <Chat />
 *       </Contained>
 *     </>
 *   );
 * }
 * ```
 */
export function Contained({ fallback, children }: ContainedProps): ReactNode {
  if (typeof document === "undefined" && !use(InsideIsland)) {
    const template = createElement("template", { [FALLBACK_ATTRIBUTE]: "" }, fallback);
    return createElement(CONTAINED_ELEMENT, { style: { display: "contents" } }, children, template);
  }
  return createElement(Boundary, { fallback }, children);
}

/**
 * Inside an island: the fallback once anything below threw (the root's `onCaughtError` reports).
 */
class Boundary extends Component<ContainedProps, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  override render(): ReactNode {
    return this.state.failed ? this.props.fallback : this.props.children;
  }
}
