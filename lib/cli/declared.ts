/**
 * @module
 * The product's settings declaration, `routes/_settings.ts`, loaded by the entry points that
 * start before a manifest is at hand (`deno task start`, `deno task dev`), so that they check the
 * product's settings with the framework's before building or listening. `main.ts` has it from the
 * manifest, which imports the same module. The launcher and the dev server read only the
 * framework's, unless those fail.
 */
import { join } from "node:path";
import type { SettingsDeclaration } from "../settings/declare.ts";
import { PROJECT_ROOT } from "./root.ts";
import { readSettings, type Settings, SettingsError, settingsOrExit } from "./settings.ts";

/** `routes/_settings.ts`'s declaration; undefined when the product has none. */
export async function declaredSettings(): Promise<SettingsDeclaration | undefined> {
  try {
    await Deno.stat(join(PROJECT_ROOT, "routes", "_settings.ts"));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  // A literal import: the server's bundle holds the module, as it holds the manifest that imports
  // it too (`build/server_bundle.ts`).
  return (await import("../../routes/_settings.ts")).default;
}

/**
 * The framework's settings, for the processes that need only those (the launcher, the dev server)
 * and leave the product's to the server they start. When the framework's make no sense, the
 * product's are read too, so that the one message before the exit names every problem.
 */
export async function frameworkSettingsOrExit(): Promise<Settings> {
  try {
    return readSettings((name) => Deno.env.get(name));
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    // A declaration that cannot load is the server's to report: this message stays the settings'.
    return settingsOrExit(await declaredSettings().catch(() => undefined));
  }
}
