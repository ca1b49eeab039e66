/**
 * @module
 * Which components are islands: the app registers each island's default export at start-up, and
 * the JSX runtime asks here, for every element it creates, whether its type is one.
 */
import type { ComponentType } from "react";

export interface IslandInfo {
  name: string;
  component: ComponentType<Record<string, unknown>>;
}

// deno-lint-ignore ban-types
const islands = new WeakMap<Function, IslandInfo>();

/** Idempotent: apps built from the same manifest register the same components. */
export function registerIsland(name: string, component: IslandInfo["component"]): void {
  islands.set(component, { name, component });
}

// deno-lint-ignore ban-types
export function islandOf(type: Function): IslandInfo | undefined {
  return islands.get(type);
}
