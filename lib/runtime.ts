/**
 * @module
 * The browser-safe API, for islands (and the routes around them): `ActionError` (how a server
 * action call that was refused or failed rejects), `recover` and `actionStatus` (refusals as
 * `useActionState` state), and `<Contained>` (a part of a page that fails on its own). Nothing here
 * reaches server-only code.
 */
export { ActionError, type ActionErrorInit } from "./shared/action_error.ts";
export { actionStatus, recover, type StateAction } from "./shared/recover.ts";
export { Contained, type ContainedProps } from "./shared/contained.ts";
