/**
 * @module
 * Sentry's own CLI (`npm:@sentry/cli`, its binary shipped in a per-platform npm package that Deno
 * installs like any optional dependency), for `deno task sentry:sourcemaps`. Run as the binary
 * itself, not through the package's Node wrapper.
 */
import { getPath } from "@sentry/cli/js/helper.js";

/** Where the binary is: in the package of this platform's. */
export const sentryCliPath: () => string = getPath;
