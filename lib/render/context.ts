/**
 * @module
 * Per-request values the server components of the framework read while rendering.
 */
import { createContext } from "react";
import type { KeptFields } from "../jsx/kept_field.ts";
import type { Assets } from "../server/manifest.ts";
import type { ProductSettings } from "../settings/declare.ts";

export interface RenderContextValue {
  nonce: string;
  assets: Assets;
  /** Each island's stylesheets, by name: linked where it renders. */
  islandStyles?: Record<string, string[]>;
  /**
   * What the user sent before the page reloaded out of date, for its fields (`jsx/kept_field.ts`).
   */
  kept?: KeptFields;
  /**
   * The app's own settings (`useSettings`), the same object for every request: no cost per page.
   */
  settings?: ProductSettings;
  /**
   * Set by every island that renders (in a Suspense fallback too): the page runs JavaScript, and
   * gets what only such a page needs (`render/islands_head.ts`). A page without pays nothing.
   */
  islands?: true;
}

export const RenderContext = createContext<RenderContextValue | null>(null);
