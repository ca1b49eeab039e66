import assert from "node:assert/strict";
import { median, pairedRatio } from "../bench/report.ts";

Deno.test("pairedRatio: CPUs of unequal speed cancel within each pair of rounds", () => {
  // Side A is 0.85x side B; the CPU A has in even rounds is 1.5x as fast as the other.
  const truth = 0.85;
  const rounds = [truth * 1.5 ** 2, truth / 1.5 ** 2, truth * 1.5 ** 2, truth / 1.5 ** 2];
  assert.ok(Math.abs(pairedRatio(rounds) - truth) < 1e-9);
  // The median of the rounds lands between the two modes, wherever the truth is.
  assert.ok(median(rounds) > 1.1);
});

Deno.test("pairedRatio: the median of the pairs, so one disturbed pair does not move it", () => {
  const ratio = pairedRatio([0.9, 0.9, 0.88, 0.88, 0.3, 0.3]);
  assert.equal(ratio, 0.88);
});

Deno.test("pairedRatio: an unpaired round is refused", () => {
  assert.throws(() => pairedRatio([1, 1, 1]), RangeError);
  assert.throws(() => pairedRatio([]), RangeError);
});
