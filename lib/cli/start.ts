/**
 * @module
 * `deno task start`: builds when the sources changed since the last build, then serves `main.ts`
 * on HOSTNAME:PORT until SIGTERM or SIGINT, letting requests in flight finish.
 */
import { dev, root } from "../config.ts";
import { isStale } from "../build/fingerprint.ts";

if (await isStale(root, dev)) {
  const { build } = await import("../build/mod.ts");
  const esbuild = await import("esbuild");
  await build({ root, dev });
  await esbuild.stop();
}

const { default: app } = await import("../../main.ts");
const port = Number(Deno.env.get("PORT") ?? 8000);
const hostname = Deno.env.get("HOSTNAME") ?? "0.0.0.0";
let server: Deno.HttpServer;
try {
  server = Deno.serve({
    port,
    hostname,
    onListen: ({ hostname, port }) => console.log(`Listening on http://${hostname}:${port}/`),
  }, app.fetch);
} catch (error) {
  // Said plainly, and a non-zero exit: the app keeps unhandled rejections from ending it.
  console.error(`Cannot listen on ${hostname}:${port}: ${(error as Error).message}`);
  Deno.exit(1);
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, async () => {
    await server.shutdown();
    const { sentry } = await import("../sentry/mod.ts");
    await sentry?.flush(2000); // bounded: an unreachable Sentry must not hold the exit
    Deno.exit(0);
  });
}
