/**
 * @module
 * Settings read once from the environment at start-up.
 */
import { fileURLToPath } from "node:url";

export const dev = Deno.env.get("NODE_ENV") === "development";

/** The project root: routes/, islands/, static/ and _build/ live below it. */
export const root = fileURLToPath(new URL("../", import.meta.url));
