/**
 * @module
 * `useSettings(settings)`: the product's settings in a page's server components - the page, its
 * layouts, `_app`, the error pages and any component they render - typed as `settings(ctx)` is in
 * a handler. The values come through the render's context (`render/context.ts`), which holds the
 * app's settings by reference: a page that does not read them pays nothing. An island cannot read
 * them (it renders in the browser too, where no settings are), and no island's props may carry a
 * secret's value (`islands/island.ts` refuses them).
 */
import { use } from "react";
import { RenderContext } from "../render/context.ts";
import { InsideIsland } from "../shared/inside_island.ts";
import type { SettingSchema } from "./read.ts";
import type { SettingsDeclaration, SettingValues } from "./declare.ts";
import type { RenderContextValue } from "../render/context.ts";

/**
 * The product's settings (`routes/_settings.ts`) in a server component of a page: the page, a
 * layout, `_app`, an error page, or any component they render, at any depth. Typed by their
 * schemas, as `settings(ctx)` in a handler. Not in an island, which renders in the browser too:
 * pass it what it needs as a prop - never a secret (a secret's value in an island's props fails
 * the render, naming the setting).
 *
 * @param settings `routes/_settings.ts`'s default export.
 * @returns The values of the app rendering the page.
 *
 * @example
 * ```tsx
 * import * as v from "valibot";
 * import { defineSettings, useSettings } from "shell";
 *
 * // routes/_settings.ts's default export
 * const settings = defineSettings({ SUPPORT_EMAIL: v.optional(v.string(), "help@example.com") });
 *
 * // in a page, a layout or any component they render
 * export function Footer() {
 *   const { SUPPORT_EMAIL } = useSettings(settings);
 *   return <footer>Questions? {SUPPORT_EMAIL}</footer>;
 * }
 * ```
 * @see docs/settings.md - In a page's components
 */
export function useSettings<S extends Readonly<Record<string, SettingSchema>>>(
  settings: SettingsDeclaration<S>,
): SettingValues<S> {
  const render = rendering();
  if (!render) {
    throw new Error(
      "useSettings() reads settings while the framework renders a page, in a server component; " +
        "in a handler, a middleware or an action use settings(ctx)",
    );
  }
  const own = render.settings;
  if (!own) {
    throw new Error(
      "useSettings(): this app has no routes/_settings.ts (export its defineSettings() there)",
    );
  }
  if (own.declaration !== settings) {
    throw new Error(
      "This app was not made with these settings: its manifest's routes/_settings.ts is another",
    );
  }
  return own.values as SettingValues<S>;
}

/** The page render's context; none outside a component's render (React has no hooks there). */
function rendering(): RenderContextValue | null {
  let inside: boolean;
  try {
    inside = use(InsideIsland); // reading a context never suspends: what throws is "no render"
  } catch {
    return null;
  }
  if (inside) {
    throw new Error(
      "useSettings() in an island: islands render in the browser too, where no settings are. " +
        "Read it in the page and pass the island what it needs as a prop (never a secret).",
    );
  }
  return use(RenderContext);
}
