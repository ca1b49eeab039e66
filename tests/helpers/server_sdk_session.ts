/**
 * @module
 * One production build of the server's Sentry SDK (`lib/build/sentry_server_sdk.ts`) in a process
 * of its own, for the test of builds at once: run with the project root, it says `ready` once
 * loaded, waits for a line on standard input - the barrier that starts every session together -
 * then writes `_build/server-sdk/` and exits 0 if all went well.
 */
import { buildServerSdk } from "../../lib/build/sentry_server_sdk.ts";

console.log("ready");
await Deno.stdin.readable.getReader().read();
await buildServerSdk(Deno.args[0], "_build");
