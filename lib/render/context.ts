/**
 * @module
 * Per-request values the server components of the framework read while rendering.
 */
import { createContext, type ReactNode } from "react";
import type { KeptFields } from "../jsx/kept_field.ts";
import type { Assets } from "../server/manifest.ts";
import type { ProductSettings } from "../settings/declare.ts";

export interface RenderContextValue {
  nonce: string;
  assets: Assets;
  /** Each island's stylesheets, by name: linked where it renders. */
  islandStyles?: Record<string, string[]>;
  /** What the user sent before the page reloaded out of date, for its fields (`jsx/kept_field.ts`). */
  kept?: KeptFields;
  /** The app's own settings (`useSettings`), the same object for every request: no cost per page. */
  settings?: ProductSettings;
  /**
   * What only a page that runs JavaScript needs (the browser SDK's trace and settings tags), taken
   * by its first island (which clears it) and rendered beside it: React hoists them into `<head>`.
   * A page without islands never asks, so pays nothing for them.
   */
  islandsHead?: () => ReactNode;
}

export const RenderContext = createContext<RenderContextValue | null>(null);
