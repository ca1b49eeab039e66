/**
 * @module
 * Server actions in an app: registers the build's actions, mounts their endpoint and, for pages
 * rendered after a form post, hands the form state to the renderer (`formStateOf`,
 * `formStateHead`). The build side is `build/actions.ts`; the browser side `client/actions.ts`.
 */
import { stringify } from "devalue";
import type { Context, Hono } from "hono";
import { createElement, type ReactNode } from "react";
import type { Failures } from "../errors/failure.ts";
import type { ManifestActions } from "../server/manifest.ts";
import type { Telemetry } from "../server/telemetry.ts";
import { FORM_STATE_META } from "../shared/form_state_meta.ts";
import { actionEndpoint } from "./endpoint.ts";
import { type Claim, type FormState, restoreFormState } from "./form_state.ts";
import { registerActions } from "./registry.ts";
import { ACTION_PATH } from "../shared/action_wire.ts";
import { internalsOf } from "../server/internals.ts";

export type { FormState };

export interface ActionOptions {
  /** Largest request body, in bytes. */
  maxBytes: number;
  origins?: string[];
  failures: Failures;
  /** Makes a form's state apply once (see `form_state.ts`). */
  claim: Claim;
  /** Spans for each action and its middleware. */
  telemetry?: Telemetry;
}

export function mountActions(
  app: Hono,
  { secret, entries }: ManifestActions,
  options: ActionOptions,
): void {
  const registry = registerActions(entries);
  if (registry.size === 0) return;
  app.use(restoreFormState(secret, options.claim));
  app.route(ACTION_PATH, actionEndpoint({ registry, secret, ...options }));
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
