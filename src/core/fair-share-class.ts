/**
 * Priority classes: fair-share-class.lua of lua/includes, name for name (docs/algorithm.md §2.11). Each class has
 * one meter refilling at share·limit up to the burst; a request whose class meter holds its cost is within its
 * class's guarantee (the class meter is its group's cap), else it borrows above the lending floor.
 */
import { FS_EPS } from './constants.generated';
import type { ClassState, FairShare, FairShareConfig } from './fair-share-state';
import type { LimiterSpec } from '../types';

/** The class every check without one (and every job without one) is decided in. */
export const DEFAULT_CLASS = 'default';

/**
 * The class part of a config block (what follows '|'): `name:share`; '' when the limiter has no classes. `claims`:
 * the queue's block, which names every other class too (`|name:share` each), so a claim decides each job in its own.
 */
export function classConfigText(spec: LimiterSpec, name: string | undefined, claims = false): string {
  if (!spec.classes) return '';
  const cls = name ?? DEFAULT_CLASS;
  const others = claims ? [...spec.classes].filter(([other]) => other !== cls).map(([other, share]) => `|${other}:${share}`) : [];
  return `|${cls}:${spec.classes.get(cls) ?? 0}${others.join('')}`;
}

/** The class meter's state at `now`, from its stored state (undefined: a new class, its meter full). */
export function fscOpen(cfg: FairShareConfig, stored: ClassState | undefined, now: number): ClassState {
  const cls = cfg.cls;
  if (!cls) throw new Error('fscOpen without a class');
  const share = cls.share;
  const size = cfg.burst;
  if (share <= 0) return { ct: 0, cl: now };
  if (!stored) return { ct: size, cl: now };
  let { ct, cl } = stored;
  if (now < cl) cl = now;
  ct = ct + ((now - cl) * share) / cfg.T;
  if (ct > size) ct = size;
  return { ct, cl: now };
}

/** true: within its class's guarantee; false: it borrows; undefined: the limiter has no classes. */
export function fscWithin(fs: FairShare, c: number): boolean | undefined {
  if (!fs.cls) return undefined;
  return fs.cls.ct >= c - FS_EPS;
}

/**
 * A request within its class's guarantee whose class meter still holds half the burst after it: the class's
 * admissions run below its share, so its groups are below the water level whatever their own caps say (the water
 * level is the limiter's, not the class's: a small class's tenants sit far above it).
 */
export function fscBelow(fs: FairShare, c: number): boolean {
  return !!fs.cls && fs.cls.ct - c >= fs.cfg.burst / 2 - FS_EPS;
}

/** The lending floor: above every floor of a request within its class's guarantee (at cap (ρ + b)/2), room for c. */
export function fscLendFloor(rho: number, b: number, c: number, atCap: number): number {
  let f = (rho + 3 * b) / 4;
  if (f > b - c) f = b - c;
  if (f < atCap) f = atCap;
  return f;
}

export function fscSpend(fs: FairShare, c: number): void {
  if (!fs.cls) return;
  const ct = fs.cls.ct - c;
  fs.cls.ct = ct < 0 ? 0 : ct;
}
