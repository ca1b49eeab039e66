/**
 * @module
 * Server actions in an app: registers the build's actions, mounts their endpoint, restores a form's
 * state on the page it lands on (`formStateRestore`, run by the app's request frame) and, for pages
 * rendered after a form post, hands what the post carried to the renderer: the form state
 * (`formStateOf`, `formStateHead`), and what was sent to an action the build no longer has, with
 * the sentence saying why the page reloaded (`keptInputOf`, `keptNotice`). The endpoint is mounted
 * even for a build without actions: a page from an earlier build may still call one. The build
 * side is `build/actions.ts`; the browser side `client/actions.ts`.
 */
import { stringify } from "devalue";
import type { Context, Hono, MiddlewareHandler } from "hono";
import { createElement, type ReactNode } from "react";
import type { Failures } from "../errors/failure.ts";
import { internalsOf } from "../server/internals.ts";
import type { ActionEntry } from "../server/manifest.ts";
import type { Telemetry } from "../server/telemetry.ts";
import { ACTION_PATH } from "../shared/action_wire.ts";
import { FORM_STATE_META } from "../shared/form_state_meta.ts";
import { type KeptInput, NOTICE_ATTRIBUTE, STALE_NOTICE } from "../shared/kept_input.ts";
import { actionEndpoint } from "./endpoint.ts";
import { type Claim, type FormState, restoreFormState, type Secret } from "./form_state.ts";
import type { Submissions } from "./once.ts";
import { registerActions } from "./registry.ts";

export type { FormState, Secret };

export interface ActionOptions {
  /** Signs what a form post carries to the page it lands on. */
  secret: Secret;
  /** The build answering (`App-Build` on every answer). */
  buildId: string;
  /** Largest request body, in bytes. */
  maxBytes: number;
  origins?: string[];
  failures: Failures;
  /** Makes a form's state apply once (see `form_state.ts`). */
  claim: Claim;
  /** Spans for each action and its middleware. */
  telemetry?: Telemetry;
  /** Where submissions are claimed, so that each has its effect once (`once.ts`). */
  submissions: Submissions;
}

/** Registers the build's actions and mounts their endpoint. */
export function mountActions(app: Hono, entries: ActionEntry[], options: ActionOptions): void {
  const registry = registerActions(entries);
  app.route(ACTION_PATH, actionEndpoint({ registry, ...options }));
}

/**
 * The step every request takes before its route or action, for the app to run (`restoreFormState`):
 * a GET carrying a form's state for its page gets it restored.
 */
export function formStateRestore(options: ActionOptions): MiddlewareHandler {
  return restoreFormState(options.secret, options.claim, options.origins);
}

/** The state of the form posted just before this request, for `renderToReadableStream`. */
export function formStateOf(c: Context): FormState | undefined {
  return internalsOf(c).formState;
}

/** The same state for `hydrateRoot`, as a `<meta>` React hoists into `<head>`. */
export function formStateHead(state: FormState | undefined): ReactNode {
  if (!state) return null;
  return createElement("meta", { name: FORM_STATE_META, content: stringify(state) });
}

/** What a form sent to an action the build no longer has, just before this request. */
export function keptInputOf(c: Context): KeptInput | undefined {
  return internalsOf(c).keptInput;
}

/** Why the page reloaded, in one sentence, at the top of the page's body. */
export function keptNotice(kept: KeptInput | undefined): ReactNode {
  if (!kept) return null;
  return createElement("p", { role: "status", [NOTICE_ATTRIBUTE]: "" }, STALE_NOTICE);
}
