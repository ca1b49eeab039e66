/**
 * @module
 * docs/testing.md shows `tests/example_app_test.ts` as it is, so its example compiles and passes
 * with the rest of the suite.
 */
import assert from "node:assert/strict";

Deno.test("docs/testing.md shows the example test as it is", async () => {
  const doc = await Deno.readTextFile(new URL("../docs/testing.md", import.meta.url));
  const example = await Deno.readTextFile(new URL("./example_app_test.ts", import.meta.url));
  assert.ok(doc.includes("```ts\n" + example + "```"), "docs/testing.md differs from the example");
});
