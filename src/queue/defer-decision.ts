/**
 * Turns an admission reply plus what the deferral step did into the public Decision, the same way for
 * both stores: a written or duplicate job rides on a denied decision; a full backlog or a slot beyond the
 * horizon becomes the denial reason instead.
 */
import type { Decision } from '../types';
import type { EnqueueResult } from '../types';

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
