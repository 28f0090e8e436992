/**
 * The limiter's side of reserve-then-settle (docs/settle.md; the store's is lua/settle.lua and src/core/settle.ts):
 * a check's `settle` flag, the actual cost's validation, and `decision.settle(actual)`.
 */
import { InputError, describeValue } from '../errors';
import type { Decision, LimiterStore, SettleResult } from '../types';
import { isIntegerIn } from '../util/validate';

/** Largest actual cost `settle` takes: far beyond any budget, exact in a double and in the scripts. */
export const MAX_ACTUAL = 2 ** 40;
/** A reservation id is '<ms>-<seq>' and, with a plan, '.' and its name: anything longer names none. */
const MAX_RESERVATION_LENGTH = 256;

const UNKNOWN: SettleResult = Object.freeze({ status: 'unknown', refunded: 0, debt: 0 });

/** A check's `settle`: a boolean, and not with `defer` (a deferred job cannot settle: enqueued work can, `job.settle`). */
export function checkSettleFlag(value: unknown, deferring: boolean): boolean {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new InputError('ERR_BL_BAD_SETTLE', `Expected \`settle\` to be a boolean, got ${describeValue(value)}`);
  }
  if (value === true && deferring) {
    throw new InputError(
      'ERR_BL_BAD_SETTLE',
      'Expected `settle` without `defer`: a deferred job cannot settle (enqueue the work with `settle: true` and settle it in its handler: job.settle(actual))',
    );
  }
  return value === true;
}

/** The actual cost given to settle: an integer 0 … MAX_ACTUAL. */
export function checkActual(value: unknown): number {
  if (!isIntegerIn(value, 0, MAX_ACTUAL)) {
    throw new InputError('ERR_BL_BAD_ACTUAL', `Expected the actual cost to be an integer from 0 to ${MAX_ACTUAL}, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * `limiter.settle(reservation, actual)`: 'unknown' for a string that names no reservation (no store call);
 * `call` runs the store call through the limiter's outage guard (a store failure rejects, like `peek`).
 */
export function settleReservation(
  store: LimiterStore,
  call: <T>(fn: () => Promise<T>) => Promise<T>,
  reservation: unknown,
  actual: unknown,
): Promise<SettleResult> {
  try {
    const units = checkActual(actual);
    if (typeof reservation !== 'string' || reservation.length === 0 || reservation.length > MAX_RESERVATION_LENGTH || !store.settle) {
      return Promise.resolve(UNKNOWN);
    }
    const settle = store.settle.bind(store);
    return call(() => settle({ reservation, actual: units }));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A decision with a reservation gets `settle(actual)`. */
export function withSettle(decision: Decision, settle: (reservation: string, actual: number) => Promise<SettleResult>): Decision {
  const reservation = decision.reservation;
  if (reservation === undefined) return decision;
  return { ...decision, settle: (actual: number) => settle(reservation, actual) };
}

/**
 * `settle: true` on a limiter with `classes`: refused. reserve.lua and settle.lua find their lane by the plan, and
 * with classes the lanes are per plan and class (a class meter the settlement would have to refund as well).
 */
export function settleInClass(): InputError {
  return new InputError(
    'ERR_BL_BAD_SETTLE',
    'Expected `settle` on a limiter without `classes`: a reservation cannot yet be settled in a priority class (docs/settle.md)',
  );
}
