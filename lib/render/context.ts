/**
 * @module
 * Per-request values the server components of the framework read while rendering.
 */
import { createContext } from "react";
import type { Assets } from "../server/manifest.ts";

export interface RenderContextValue {
  nonce: string;
  assets: Assets;
}

export const RenderContext = createContext<RenderContextValue | null>(null);
