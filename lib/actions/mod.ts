/**
 * @module
 * Server actions in the app: registers the build's actions, mounts their endpoint and, for pages
 * rendered after a form post, hands the form state to the renderer (`formStateOf`,
 * `formStateHead`). The build side is `build/actions.ts`; the browser side `client/actions.ts`.
 */
import { stringify } from "devalue";
import type { Context, Hono } from "hono";
import { createElement, type ReactNode } from "react";
import type { ManifestActions } from "../manifest.ts";
import { actionEndpoint } from "./endpoint.ts";
import { type FormState, restoreFormState } from "./form_state.ts";
import { registerActions } from "./registry.ts";
import { FORM_STATE_META } from "./form_state_meta.ts";
import { ACTION_PATH } from "./wire.ts";

export type { FormState };

const DEFAULT_MAX_BYTES = 1024 * 1024;

export function mountActions(app: Hono, { secret, entries }: ManifestActions): void {
  const registry = registerActions(entries);
  if (registry.size > 0) app.use(restoreFormState(secret));
  const maxBytes = Number(Deno.env.get("ACTION_BODY_LIMIT")) || DEFAULT_MAX_BYTES;
  app.route(ACTION_PATH, actionEndpoint({ registry, secret, maxBytes }));
}

/** The state of the form posted just before this request, for `renderToReadableStream`. */
export function formStateOf(c: Context): FormState | undefined {
  return c.get("formState");
}

/** The same state for `hydrateRoot`, as a `<meta>` React hoists into `<head>`. */
export function formStateHead(state: FormState | undefined): ReactNode {
  if (!state) return null;
  return createElement("meta", { name: FORM_STATE_META, content: stringify(state) });
}
