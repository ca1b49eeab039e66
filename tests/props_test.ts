/**
 * @module
 * Island props serialization (`lib/props.ts`): rich values survive the trip, and a prop that
 * cannot make it fails loudly, naming the island and where the prop is.
 */
import assert from "node:assert/strict";
import { deserializeProps, serializeProps } from "../lib/shared/props.ts";

const roundTrip = (props: Record<string, unknown>) =>
  deserializeProps(serializeProps("Test", props));

Deno.test("props keep their types: Date, Map, Set, BigInt, URL, undefined", () => {
  const props = {
    when: new Date("2026-01-02T03:04:05.678Z"),
    scores: new Map<unknown, unknown>([["ada", 1n], [2, new Date(0)]]),
    tags: new Set(["a", "b"]),
    big: 2n ** 70n,
    home: new URL("https://example.test/a/b?c=1#d"),
    missing: undefined,
    special: [NaN, -0, Infinity, -Infinity, null],
  };
  const back = roundTrip(props);
  assert.deepEqual(back, props);
  assert.ok(back.when instanceof Date);
  assert.ok(back.scores instanceof Map);
  assert.ok(back.tags instanceof Set);
  assert.equal(typeof back.big, "bigint");
  assert.ok(back.home instanceof URL);
  assert.equal((back.home as URL).href, "https://example.test/a/b?c=1#d");
  assert.ok("missing" in back, "an undefined prop is kept, not dropped");
  assert.ok(Object.is((back.special as number[])[1], -0));
});

Deno.test("nested values and cycles survive", () => {
  const node: Record<string, unknown> = { name: "root", children: [] };
  const child = { name: "child", parent: node, at: new Date(7) };
  (node.children as unknown[]).push(child);
  const shared = { id: 1 };
  const props = { tree: node, twice: [shared, shared], deep: { a: { b: { c: [new Set([1n])] } } } };

  const back = roundTrip(props) as typeof props & { tree: typeof node };
  assert.deepEqual(back, props);
  const [backChild] = back.tree.children as (typeof child)[];
  assert.equal(backChild.parent, back.tree, "the cycle points at the same object again");
  assert.equal(back.twice[0], back.twice[1], "a shared object stays shared");
});

Deno.test("a function prop fails with the island's name and the prop's path", () => {
  assert.throws(
    () => serializeProps("Counter", { onClick: () => {} }),
    (error: Error) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, /^Island <Counter> got a prop that cannot be sent/);
      assert.match(error.message, /props\.onClick/);
      assert.match(error.message, /function/);
      return true;
    },
  );
  assert.throws(
    () => serializeProps("Menu", { items: [{ label: "a" }, { label: "b", run() {} }] }),
    /Island <Menu> .*props\.items\[1\]\.run/,
  );
});

Deno.test("class instances and symbols are refused too", () => {
  class Point {
    x = 1;
  }
  assert.throws(() => serializeProps("Map", { at: new Point() }), /Island <Map> .*props\.at/);
  assert.throws(() => serializeProps("Tag", { id: Symbol("x") }), /Island <Tag> .*props\.id/);
});
