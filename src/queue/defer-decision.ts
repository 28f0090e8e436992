/**
 * Turns an admission reply plus what the deferral step did into the public Decision, the same way for
 * both stores: a written or duplicate job rides on a denied decision; a full backlog or a slot beyond the
 * horizon becomes the denial reason instead.
 */
import type { Decision } from '../types';
import type { EnqueueResult } from './job-record';
import type { QueueStore } from './types';

export function withDeferral(decision: Decision, outcome: EnqueueResult | undefined): Decision {
  if (decision.allowed || !outcome) return decision;
  switch (outcome.status) {
    case 'written':
    case 'duplicate':
      return {
        ...decision,
        reason: decision.reason === 'concurrency' ? 'concurrency' : 'limit',
        job: { id: outcome.id, runAt: outcome.runAt, duplicate: outcome.status === 'duplicate' },
      };
    case 'backlog-full':
    case 'defer-horizon':
      return { ...decision, reason: outcome.status };
  }
}

const QUEUE_METHODS = [
  'enqueue',
  'cancel',
  'groupCounts',
  'dispatch',
  'acquireDispatcherLease',
  'claim',
  'claimMany',
  'waitForReady',
  'onError',
  'complete',
  'completeAndClaim',
  'fail',
  'extendLease',
  'reclaimExpired',
  'getJob',
  'counts',
  'listDead',
  'retryDead',
  'removeDead',
] as const satisfies ReadonlyArray<keyof QueueStore>;

type AnyMethod = (...args: unknown[]) => unknown;

/**
 * The queue operations as a plain object of functions (so it can be spread into a LimiterStore). A getter
 * is asked on every call, so a queue re-created after `destroy()` is picked up.
 */
export function queueMethods(source: QueueStore | (() => QueueStore)): QueueStore {
  const get = typeof source === 'function' ? source : () => source;
  const out: Record<string, AnyMethod> = {};
  for (const name of QUEUE_METHODS) {
    out[name] = (...args: unknown[]) => {
      const queue = get();
      return (queue[name] as AnyMethod).apply(queue, args);
    };
  }
  return out as unknown as QueueStore;
}
