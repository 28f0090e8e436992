/**
 * The `adaptive` limiter option resolved to the spec's AdaptiveSpec (the rule: lua/includes/adaptive.lua and
 * docs/adaptive.md). Every part shares the code ERR_BL_ADAPTIVE; a message names the part and its value.
 */
import type { AdaptiveSpec } from '../types';
import { refuseUnknownOptions } from '../util/option-names';
import { integer, refuse } from '../util/validate';

/** The `adaptive` option: the limit in force moves between `min` and `max`, starting at `limit`. */
export interface AdaptiveOptions {
  /** The floor: the limit in force never falls below it (≥ 1, ≤ `limit`). */
  readonly min: number;
  /** The ceiling: the limit in force never rises above it (≥ `limit`). */
  readonly max: number;
  /**
   * The first rise after a cut, in units; each later rise (one per `intervalMs` of ok reports) doubles it, up to
   * half the limit in force. @defaultValue `max(1, round(limit / 100))`
   */
  readonly increase?: number;
  /** A throttled report multiplies the limit by this (0 < decrease < 1). @defaultValue `0.9` */
  readonly decrease?: number;
  /**
   * At most one cut and one rise per interval, whoever reports: a burst of refusals from one episode counts once.
   * Make it at least the upstream's round trip. @defaultValue `250`
   */
  readonly intervalMs?: number;
}

const CODE = 'ERR_BL_ADAPTIVE';

export function resolveAdaptive(value: unknown, limit: number): AdaptiveSpec | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) refuse('adaptive', '{ min, max, increase?, decrease?, intervalMs? }', value, CODE);
  const o = value as AdaptiveOptions;
  refuseUnknownOptions(o, ['min', 'max', 'increase', 'decrease', 'intervalMs'], 'createLimiter()', 'adaptive.');
  const min = integer('adaptive.min', o.min, { code: CODE, max: limit, expected: `an integer from 1 to \`limit\` (${limit})` });
  const max = integer('adaptive.max', o.max, { code: CODE, min: limit, expected: `an integer ≥ \`limit\` (${limit})` });
  const increase = integer('adaptive.increase', o.increase, { code: CODE, max, fallback: Math.max(1, Math.round(limit / 100)) });
  const decrease = o.decrease ?? 0.9;
  if (typeof decrease !== 'number' || !(decrease > 0 && decrease < 1))
    refuse('adaptive.decrease', 'a number between 0 and 1 (exclusive)', o.decrease, CODE);
  const intervalMs = integer('adaptive.intervalMs', o.intervalMs, { code: CODE, max: 86_400_000, fallback: 250 });
  return Object.freeze({ min, max, increase, decrease, intervalMs });
}
