/**
 * @module
 * `deno task sentry:sourcemaps`: uploads the production build's scripts and source maps to Sentry
 * (`sentry-cli sourcemaps upload`), building first if the sources changed. Sentry matches them to
 * a browser error by the debug IDs the build put in each chunk, so no release or URL prefix has to
 * agree. Needs `SENTRY_AUTH_TOKEN` (a token with the `project:releases` scope), `SENTRY_ORG` and
 * `SENTRY_PROJECT`; `SENTRY_URL` for a self-hosted Sentry. Without them it names what is missing
 * and exits 1; a failed upload exits with sentry-cli's code.
 */
import { join } from "node:path";
import { isStale } from "../build/fingerprint.ts";
import { sentryCliPath } from "../build/sentry_cli.ts";
import { buildOrExit } from "./build_or_exit.ts";
import { PROJECT_ROOT } from "./root.ts";

const REQUIRED = ["SENTRY_AUTH_TOKEN", "SENTRY_ORG", "SENTRY_PROJECT"];

const missing = REQUIRED.filter((name) => !Deno.env.get(name));
if (missing.length > 0) {
  console.error(
    `Cannot upload source maps: ${missing.join(", ")} ${
      missing.length > 1 ? "are" : "is"
    } not set.\n` +
      "Set SENTRY_AUTH_TOKEN (an auth token with the project:releases scope), SENTRY_ORG and " +
      "SENTRY_PROJECT (their slugs); SENTRY_URL too for a self-hosted Sentry.",
  );
  Deno.exit(1);
}

if (await isStale(PROJECT_ROOT, false)) {
  await buildOrExit(false);
}

// sentry-cli reads the credentials from the environment itself.
const upload = new Deno.Command(sentryCliPath(), {
  args: ["sourcemaps", "upload", join(PROJECT_ROOT, "_build/static")],
  stdout: "inherit",
  stderr: "inherit",
});
Deno.exit((await upload.output()).code);
