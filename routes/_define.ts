/**
 * @module
 * The app's request state, declared once: what its middleware puts on a request. `define` types
 * every middleware, handler, page, layout and server action with it, so `state.user` is a `User`
 * wherever it is read, with no cast.
 */
import { createDefine } from "shell";
import type { UserState } from "shell/auth";

/** `user`: set by the guards of `shell/auth` (`requireUser()`, `requireRole()`, `withUser()`). */
export type State = UserState;

export const define = createDefine<State>();
