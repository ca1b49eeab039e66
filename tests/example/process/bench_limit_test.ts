/**
 * @module
 * The bench's limit renders the example's pages as `deno task start` serves them
 * (tests/process/bench_limit_test.ts for the test app): `bench/bare.ts` and the framework, in the project's
 * own built tree, send the same HTML for every SSR page the bench loads, but for the nonce. Goes
 * with the example (its stylesheets: `_app`'s, the counter island's CSS module).
 */
import assert from "node:assert/strict";
import { pagesOfBoth } from "../../helpers/limit.ts";
import { PROJECT_ROOT } from "../../helpers/project_copy.ts";

Deno.test("the bench's limit sends the example's pages, byte for byte but the nonce", async () => {
  for (const { path, framework, limit } of await pagesOfBoth(PROJECT_ROOT)) {
    assert.equal(limit, framework, path);
  }
});
