/**
 * What islands import from the framework: `import { ... } from "shell/runtime"`: `ActionError`
 * (how a refused or failed server action call rejects), `recover` and `actionStatus` (refusals as
 * `useActionState` state), `<Contained>` (a part of a page that fails on its own), and live data:
 * `useLiveCollection` (a collection's view kept live from its server-rendered snapshot) and
 * `useFeed` (any event stream, with backoff and pauses while hidden); and `httpError`, so the
 * product's error catalogue, which the server throws from, is a module its islands can import
 * too (to compare an `ActionError`'s `code` with the catalogue's). Browser-safe by
 * construction: it reaches only `lib/shared/`, whose modules import nothing of the server's
 * (`tests/process/public_api_test.ts` checks its whole module graph). Islands never import
 * `lib/shared/...` or `lib/client/...` themselves.
 *
 * @example
 * ```tsx
 * // islands/Sign.tsx
 * import { useActionState } from "react";
 * import { actionStatus, recover } from "shell/runtime";
 *
 * type State = { wait?: string };
 * declare function sign(previous: State, form: FormData): Promise<State>; // a server action
 *
 * const signOrWait = recover(sign, (error) =>
 *   actionStatus(error) === 429 ? { wait: "Please wait a minute." } : undefined
 * );
 *
 * export default function Sign() {
 *   const [state, action] = useActionState(signOrWait, {});
 *   return <form action={action}>{state.wait}</form>;
 * }
 * ```
 * @see docs/islands.md
 * @module
 */
export { ActionError, type ActionErrorInit } from "./shared/action_error.ts";
export {
  type ClientErrorStatus,
  HttpError,
  httpError,
  type HttpErrorInit,
  isHttpError,
  notFound,
} from "./shared/http_error.ts";
export { actionStatus, recover, type StateAction } from "./shared/recover.ts";
export { Contained, type ContainedProps } from "./shared/contained.ts";
export { type FeedStatus, useFeed, type UseFeedOptions } from "./shared/use_feed.ts";
export {
  type LiveCollection,
  type LiveCollectionOptions,
  useLiveCollection,
} from "./shared/use_live_collection.ts";
export type { Change, Entity, Snapshot } from "./shared/live_view.ts";
