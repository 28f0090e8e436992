/**
 * ruleStatusOf: what a reply's mark per rule says (both stores derive a decision's rule fields with it, so the
 * differential test cannot catch a mistake here).
 */
import { ruleStatusOf, ruleTag } from '../../src/core/rules';
import { RL_SLOTS } from '../../src/core/constants.generated';
import type { RuleAlgorithm, RuleSpec } from '../../src/types';

const rule = (algorithm: RuleAlgorithm, limit: number, windowMs: number): RuleSpec => ({
  name: 'r',
  limit,
  windowMs,
  algorithm,
  burst: Math.max(1, Math.ceil(limit / 20)),
  tag: ruleTag('r', algorithm, windowMs),
});
const NOW_US = 1_700_000_000_123_456;

test('a token bucket: the mark is ns until it is full; remaining is the whole tokens it holds now', () => {
  const tb = rule('token-bucket', 100, 1000); // burst 5, a token every 1e6 / 96 µs
  const Tns = (1_000_000 / 96) * 1000;
  expect(ruleStatusOf(tb, 0, NOW_US)).toEqual({ remaining: 5, resetUs: 0 });
  // 2.5 tokens left: 2 whole ones, full again in 2.5 emission intervals
  const mark = Math.trunc(2.5 * Tns);
  expect(ruleStatusOf(tb, mark, NOW_US)).toEqual({ remaining: 2, resetUs: mark / 1000 });
  // exactly 3 tokens spent (a mark cut to whole ns): 2 left, not 1
  expect(ruleStatusOf(tb, Math.trunc(3 * Tns), NOW_US).remaining).toBe(2);
  expect(ruleStatusOf(tb, Math.trunc(5 * Tns), NOW_US).remaining).toBe(0);
});

test("a sliding window: the mark is used · 16 + k; its reset is when sub-window j − 11 + k leaves, j now's", () => {
  const sw = rule('sliding-window', 10, 1000);
  const slotUs = 1_000_000 / RL_SLOTS;
  const j = Math.floor(NOW_US / slotUs);
  expect(ruleStatusOf(sw, 0, NOW_US)).toEqual({ remaining: 10, resetUs: 0 });
  // 7 units, the newest in sub-window j itself (k = 11): whole again when it has left the window
  expect(ruleStatusOf(sw, 7 * 16 + 11, NOW_US)).toEqual({ remaining: 3, resetUs: (j + 11) * slotUs - NOW_US });
  expect(ruleStatusOf(sw, 7 * 16 + 3, NOW_US)).toEqual({ remaining: 3, resetUs: (j + 3) * slotUs - NOW_US });
});

test('a fixed window: the mark is the count; its reset is the end of the current window', () => {
  const fw = rule('fixed-window', 7, 1000);
  expect(ruleStatusOf(fw, 0, NOW_US)).toEqual({ remaining: 7, resetUs: 0 });
  expect(ruleStatusOf(fw, 4, NOW_US)).toEqual({ remaining: 3, resetUs: 1_000_000 - (NOW_US % 1_000_000) });
});

test.each<RuleAlgorithm>(['token-bucket', 'sliding-window', 'fixed-window'])(
  '%s: −1 (an idempotent duplicate: nothing decided) reads as nothing left, no reset',
  (algorithm) => {
    expect(ruleStatusOf(rule(algorithm, 10, 1000), -1, NOW_US)).toEqual({ remaining: 0, resetUs: 0 });
  },
);
