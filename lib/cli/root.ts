/**
 * @module
 * The project root: routes/, islands/, static/ and _build/ live below it.
 */
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
