/**
 * @module
 * Per-request values the server components of the framework read while rendering.
 */
import { createContext } from "react";
import type { Assets } from "../server/manifest.ts";

export interface RenderContextValue {
  nonce: string;
  assets: Assets;
  /** Each island's stylesheets, by name: linked where it renders. */
  islandStyles?: Record<string, string[]>;
}

export const RenderContext = createContext<RenderContextValue | null>(null);
