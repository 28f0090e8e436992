/**
 * What the Dispatcher and Worker need from a limiter, and the job API's argument checks.
 */
import { describeValue, InputError } from '../errors';
import { refuse } from '../util/validate';
import type { QueueStore, SettleResult } from '../types';

/** Most jobs one `claimMany` / `completeAndClaim` call takes; larger counts are clamped. */
export const CLAIM_MAX = 1000;

/** A limiter (from `createLimiter`) or anything else that exposes the limiter's queue operations. */
export interface QueueHolder {
  readonly queue: QueueStore;
  /** The limiter's adaptive limit (limiter.report): a worker reports its jobs' outcomes (absent: not reported). */
  readonly report?: (outcome: 'ok' | 'throttled', opts?: { readonly retryAfterMs?: number }) => Promise<unknown>;
  /** The limiter's settle: a job enqueued with `settle` settles its reservation through it (`job.settle`). */
  readonly settle?: (reservation: string, actual: number) => Promise<SettleResult>;
}

/** The holder's report (a limiter's), or undefined. */
export function reporterOf(holder: unknown): QueueHolder['report'] {
  const report = typeof holder === 'object' && holder !== null ? (holder as QueueHolder).report : undefined;
  return typeof report === 'function' ? report.bind(holder) : undefined;
}

/** The holder's settle (a limiter's), or undefined. */
export function settlerOf(holder: unknown): QueueHolder['settle'] {
  const settle = typeof holder === 'object' && holder !== null ? (holder as QueueHolder).settle : undefined;
  return typeof settle === 'function' ? settle.bind(holder) : undefined;
}

export function requireQueue(holder: unknown): QueueStore {
  const queue = typeof holder === 'object' && holder !== null ? (holder as { queue?: unknown }).queue : undefined;
  if (typeof queue !== 'object' || queue === null || typeof (queue as QueueStore).claim !== 'function') {
    refuse('limiter', 'a limiter with a queue (createLimiter(...))', holder);
  }
  return queue as QueueStore;
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : describeValue(error);
}

/** Most dead letters one `listDead` call returns. */
export const DEAD_PAGE_MAX = 1000;

/**
 * listDead's page, the same on every store: offset floored and ≥ 0, count floored and within 1..1000.
 * A value that is not a finite number is a caller's bug, so it throws instead of guessing.
 */
export function deadPage(offset: number, count: number): { offset: number; count: number } {
  for (const [name, value] of [
    ['offset', offset],
    ['count', count],
  ] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new InputError('ERR_BL_DEAD_PAGE', `Expected listDead \`${name}\` to be a finite number, got ${describeValue(value)}`);
    }
  }
  return { offset: Math.max(0, Math.floor(offset)), count: Math.min(DEAD_PAGE_MAX, Math.max(1, Math.floor(count))) };
}

/** claimMany's `max`: floored and within 1..CLAIM_MAX (the worker asks for its free slots, never 0). */
export function claimCount(max: number): number {
  return Number.isFinite(max) ? Math.min(CLAIM_MAX, Math.max(1, Math.floor(max))) : 1;
}
