/**
 * @module
 * The page cache's notice that it is off, said once per process: a test that starts a process of
 * its own (a fresh one, since this one's apps may have said it already), so it lives here, not in
 * tests/page_cache_test.tsx, which `deno task test:unit` runs with `--deny-run`.
 */
import assert from "node:assert/strict";

Deno.test("why the cache is off is said once per process, and only by an app with a route that declares `cache`", async () => {
  // A process of its own: this one's apps may have said it already.
  const helpers = new URL("../helpers/app.ts", import.meta.url).href;
  const script = `
    import { memoryApp } from ${JSON.stringify(helpers)};
    const plain = { default: () => "plain" };
    await memoryApp({ routes: { "index.tsx": plain } }).close();
    console.log("--- cached routes");
    const cached = { cache: { maxAge: 60 }, default: () => "cached" };
    for (let i = 0; i < 3; i++) await memoryApp({ routes: { "index.tsx": cached } }).close();
  `;
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    cwd: new URL("../..", import.meta.url),
    env: { NODE_ENV: "production" },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const out = new TextDecoder().decode(stdout);
  assert.equal(code, 0, out + new TextDecoder().decode(stderr));
  const [plain, cached] = out.split("--- cached routes");
  assert.doesNotMatch(plain, /page cache is off/, "no route declares `cache`: nothing to say");
  const said = cached.split("\n").filter((line) => line.includes("page cache is off"));
  assert.equal(said.length, 1, `three apps, one line:\n${cached}`);
  assert.match(said[0], /"level":"info".*the app's origin is not configured \(APP_ORIGIN\)/);
});
