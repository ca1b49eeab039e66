/**
 * @module
 * What an island gets when it imports a `"use server"` module (see `build/action_stubs.ts`): each
 * export is a function that calls the action through the action client (`action_client.ts`), with
 * the page's trace until the Sentry SDK carries it. The client is a bundle of its own, off the
 * page's critical path: fetched once the browser is idle, or at the first call if that is sooner.
 */
import { pageTraceHeaders } from "./trace.ts";

// esbuild writes the URL of the action client's own bundle in here (see `build/bundle.ts`).
declare const ACTION_CLIENT_URL: string;
let client: Promise<typeof import("./action_client.ts")> | undefined;
/** A fetch of the client that failed (offline for a moment) is tried again at the next call. */
const actionClient = () =>
  client ??= import(ACTION_CLIENT_URL).catch((error) => {
    client = undefined;
    throw error;
  });

(self.requestIdleCallback ?? setTimeout)(() => actionClient().catch(() => {}));

export function serverAction(id: string, name: string): (...args: unknown[]) => Promise<unknown> {
  const call = async (...args: unknown[]) => {
    const { callAction } = await actionClient();
    // The headers come from here: the Sentry chunk tells this build's `trace.ts` when it took over.
    return callAction(id, name, args, pageTraceHeaders());
  };
  return Object.defineProperty(call, "name", { value: name });
}
