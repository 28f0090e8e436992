/**
 * The adaptive global limit: the TypeScript twin of lua/includes/adaptive.lua (name for name; the rule and the
 * state's layout are described there and in docs/adaptive.md). MemoryStore keeps the state on the limiter's
 * FairShareState (`adaptive`, like the Redis field that lives in the groups hash).
 */
import type { AdaptiveSpec, LimiterSpec } from '../types';

/** The adaptive numbers of the config block (after '~'), with the configured bucket they scale. */
export interface AdaptiveConfig {
  readonly min: number;
  readonly max: number;
  readonly increase: number;
  readonly decrease: number;
  readonly intervalUs: number;
  readonly limit: number;
  readonly burst: number;
  readonly reserve: number;
  readonly sustained: boolean;
}

/** The state (one hash field in Redis): see lua/includes/adaptive.lua. */
export interface AdaptiveState {
  l: number;
  ti: number;
  td: number;
  hold: number;
  step: number;
  fresh: boolean;
}

/** The config block's adaptive part: '~' and five numbers ('' without `adaptive`). */
export function adaptiveConfigText(spec: LimiterSpec): string {
  const a = spec.adaptive;
  return a ? `~${a.min},${a.max},${a.increase},${a.decrease},${a.intervalMs}` : '';
}

/** ad_config. */
export function adConfig(spec: LimiterSpec): AdaptiveConfig | false {
  const a: AdaptiveSpec | undefined = spec.adaptive;
  if (!a) return false;
  return {
    min: a.min,
    max: a.max,
    increase: a.increase,
    decrease: a.decrease,
    intervalUs: a.intervalMs * 1000,
    limit: spec.limit,
    burst: spec.burst,
    reserve: spec.reserve,
    sustained: spec.sustained,
  };
}

/** ad_load: a copy of the stored state, or a fresh one at the configured limit made at `now`. */
export function adLoad(stored: AdaptiveState | undefined, ad: AdaptiveConfig, now: number): AdaptiveState {
  if (!stored) return { l: ad.limit, ti: now, td: 0, hold: 0, step: ad.increase, fresh: true };
  return { ...stored, fresh: false };
}

/** ad_apply: the bucket's numbers as the limit in force `l` sizes them. */
export function adApply(ad: AdaptiveConfig, windowUs: number, l: number): { limit: number; burst: number; reserve: number; T: number } {
  let b = Math.floor((ad.burst * l) / ad.limit + 0.5);
  if (b > l) b = l;
  if (b < 1) b = 1;
  let rsv = Math.floor((ad.reserve * l) / ad.limit);
  if (rsv > b - 1) rsv = b - 1;
  const T = ad.sustained ? windowUs / l : windowUs / (l - b + 1);
  return { limit: l, burst: b, reserve: rsv, T };
}

/** ad_report: one report at `now` (µs); returns the change (-1, 0, 1) and whether the state must be written. */
export function adReport(
  ad: AdaptiveConfig,
  st: AdaptiveState,
  nowIn: number,
  throttled: boolean,
  retryUs: number,
): [change: -1 | 0 | 1, write: boolean] {
  let now = nowIn;
  if (now < st.ti) now = st.ti;
  if (now < st.td) now = st.td;
  let change: -1 | 0 | 1 = 0;
  let write = st.fresh;
  if (throttled) {
    if (retryUs > 0 && now + retryUs > st.hold) {
      st.hold = now + retryUs;
      write = true;
    }
    if (st.td === 0 || now - st.td >= ad.intervalUs) {
      let l = Math.floor(st.l * ad.decrease);
      if (l < ad.min) l = ad.min;
      if (l < st.l) change = -1;
      st.l = l;
      st.td = now;
      st.ti = now;
      st.step = ad.increase;
      write = true;
    }
  } else if (now >= st.hold && now - st.ti >= ad.intervalUs && (st.td === 0 || now - st.td >= ad.intervalUs)) {
    let l = st.l + st.step;
    if (l > ad.max) l = ad.max;
    if (l > st.l) change = 1;
    let step = st.step * 2;
    const half = Math.floor(l / 2);
    if (step > half) step = half;
    if (step < ad.increase) step = ad.increase;
    st.l = l;
    st.ti = now;
    st.step = step;
    write = true;
  }
  return [change, write];
}
