/**
 * @module
 * `safeNext`: `next=` only ever leads to our own origin. Known spellings of another origin are
 * refused; then fast-check throws strings at it — arbitrary ones, and ones assembled from the
 * pieces open redirects are made of (slashes, backslashes, their percent-encodings, tabs, dots,
 * schemes, `@`) — and whatever comes out must be a path that a browser, resolving it as a
 * `Location` against our origin, keeps on our origin. On a failure fast-check prints the seed;
 * `FUZZ_SEED=<seed>` replays it.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { safeNext } from "../lib/auth.ts";

const OURS = ["https://app.example", "http://127.0.0.1:8000"];

/** What a browser does with `Location: <path>` on each of our origins: stays there. */
function assertOurs(input: unknown, path: string): void {
  assert.match(path, /^\/(?![/\\])/, `${JSON.stringify(input)} → ${JSON.stringify(path)}`);
  assert.doesNotMatch(path, /[\\\p{Cc}]/u, JSON.stringify(input));
  for (const origin of OURS) {
    assert.equal(new URL(path, origin).origin, origin, `${JSON.stringify(input)} → ${path}`);
  }
  assert.equal(safeNext(path), path, "a path it gave is kept as it is");
}

Deno.test("paths on our origin are kept, with their query and fragment", () => {
  for (
    const path of [
      "/",
      "/admin",
      "/admin?tab=users&x=1",
      "/a/b/c#part",
      "/%2F%2Fevil.example", // an encoded slash is part of a path of ours
      "/search?q=//evil.example",
      "/caf%C3%A9",
    ]
  ) {
    assert.equal(safeNext(path), path);
  }
  assert.equal(safeNext("/a/./b/../c"), "/a/c", "re-serialised as the browser would");
  assert.equal(safeNext("/é"), "/%C3%A9");
});

Deno.test("other origins, in every spelling we know, fall back", () => {
  const attacks = [
    "//evil.example",
    "//evil.example/path",
    "///evil.example",
    "/\\evil.example",
    "\\/evil.example",
    "/\\/evil.example",
    "https://evil.example",
    "https:evil.example",
    "http://127.0.0.1:8000@evil.example",
    "javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "evil.example",
    "%2F%2Fevil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "\t//evil.example",
    " //evil.example",
    "/.//evil.example",
    "/..//evil.example",
    "/a/../..//evil.example",
    "/\u0000/evil.example",
    "/\u007f",
    "/\u0085/evil.example",
    "",
    "/" + "a".repeat(2048),
  ];
  for (const attack of attacks) assert.equal(safeNext(attack, "/home"), "/home", attack);
  for (const value of [undefined, null, 42, ["/admin"], new File([], "/admin")]) {
    assert.equal(safeNext(value), "/");
  }
});

const PIECES = [
  "/",
  "//",
  "\\",
  "%2F",
  "%2f",
  "%5C",
  "%5c",
  "%09",
  "%00",
  "\t",
  "\n",
  "\r",
  " ",
  "\u3000",
  "\uff0f",
  ".",
  "..",
  "./",
  "../",
  "@",
  ":",
  "?",
  "#",
  "https:",
  "http:",
  "javascript:",
  "evil.example",
  "127.0.0.1",
  "[::1]",
  "admin",
  "%",
  "%%",
  "\u2028",
];

const assembled = fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 10 })
  .map((parts) => parts.join(""));

Deno.test("fuzzed: whatever goes in, what comes out stays on our origin", () => {
  const seed = Number(Deno.env.get("FUZZ_SEED")) || undefined;
  fc.assert(
    fc.property(
      fc.oneof(assembled, fc.string({ unit: "binary" }), fc.webUrl(), fc.webPath()),
      (input) => assertOurs(input, safeNext(input)),
    ),
    { numRuns: 20_000, seed },
  );
  // The same pieces after a leading slash: the case that matters, as `/login?next=` sends it.
  fc.assert(
    fc.property(assembled, (tail) => assertOurs(`/${tail}`, safeNext(`/${tail}`))),
    { numRuns: 20_000, seed },
  );
});
