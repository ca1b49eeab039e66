import assert from "node:assert/strict";
import { median, pairedRatio, pairRounds } from "../bench/report.ts";

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

Deno.test("pairRounds: BENCH_ROUNDS counts pairs, each side on each CPU once a pair", () => {
  // bench/sentry_cost.ts ran BENCH_ROUNDS rounds: BENCH_ROUNDS=3 measured for minutes, then threw.
  assert.deepEqual(pairRounds(1), [0, 1]);
  const rounds = pairRounds(3);
  assert.equal(rounds.length, 6);
  assert.equal(pairedRatio(rounds.map((round) => round % 2 === 0 ? 2 : 0.5)), 1);
  for (const wrong of [0, 1.5, NaN, -1]) assert.throws(() => pairRounds(wrong), RangeError);
});
