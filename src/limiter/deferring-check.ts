/**
 * A check that may defer. A denied request's job is written in the same store call as its decision, so its
 * payload travels with that call; an allowed request needs none. So the payload is encoded only for a group
 * this process saw denied within the last window (it is likely denied now): that check goes in one call, payload
 * included. Any other check goes first without it and, denied by the store, comes again with it (the second
 * call decides afresh: a unit freed meanwhile admits it). Only the final decision is reported to observers.
 * A check with an idempotency key always goes in one call: the key must be looked up before anything is
 * decided, or a retried request whose job exists could run now as well.
 */
import { InputError } from '../errors';
import type { OutageGuard } from './outage/outage';
import type { Durability } from '../queue/durability';
import { checkDeferRequest, toDeferInput, type DeferRequest, type ResolvedDeferOptions } from '../queue/defer-input';
import type { AdmitInput, Decision } from '../types';

/** Groups remembered as denied at once; past it the memory starts afresh (a miss costs one more call). */
const MAX_REMEMBERED = 10_000;

export interface DeferringCheckDeps {
  readonly guard: OutageGuard;
  readonly durable: Durability | undefined;
  readonly deferOptions: ResolvedDeferOptions;
  /** The limiter's window: a group denied within it is likely denied again (a flood stays denied). */
  readonly windowMs: number;
  /** Scopes an idempotency key to its group (one tenant's key never names another's job). */
  readonly scope: (group: string, defer: NonNullable<AdmitInput['defer']>) => NonNullable<AdmitInput['defer']>;
}

/** `concurrency`: the check's request-concurrency cap (0 = none); `plan`: the name of the check's plan (AdmitInput.plan), if any. */
export type DeferringCheck = (
  group: string,
  weight: number,
  cost: number,
  request: DeferRequest,
  groupConcurrency: number,
  concurrency: number,
  plan?: string,
) => Promise<Decision>;

export function createDeferringCheck({ guard, durable, deferOptions, windowMs, scope }: DeferringCheckDeps): DeferringCheck {
  // group → local ms until which it is likely denied: a window after its last denial, or its retry time if later
  // (an allowed decision forgets it at once)
  const deniedUntil = new Map<string, number>();
  const remember = (group: string, decision: Decision): void => {
    if (decision.allowed) {
      deniedUntil.delete(group);
    } else if (decision.reason === 'limit') {
      if (deniedUntil.size >= MAX_REMEMBERED) deniedUntil.clear();
      deniedUntil.set(group, Date.now() + Math.max(decision.retryAfterMs, windowMs));
    }
  };

  /** The payload encoded, or the InputError a payload JSON cannot encode (or too large) gives. */
  const encode = (group: string, request: DeferRequest, groupConcurrency: number): NonNullable<AdmitInput['defer']> | InputError => {
    try {
      return scope(group, toDeferInput(request, deferOptions, groupConcurrency));
    } catch (error) {
      if (error instanceof InputError && (error.code === 'ERR_BL_PAYLOAD_TOO_LARGE' || error.code === 'ERR_BL_BAD_PAYLOAD')) return error;
      throw error;
    }
  };

  const deferring = (base: AdmitInput, defer: NonNullable<AdmitInput['defer']>): Promise<Decision> => {
    const group = base.group;
    const deferred = guard.admit({ ...base, defer }).then((decision) => (remember(group, decision), decision));
    return durable ? deferred.then((decision) => durable.confirm(decision)) : deferred;
  };

  return (group, weight, cost, request, groupConcurrency, concurrency, plan) => {
    checkDeferRequest(request);
    const base = admitInput(group, weight, cost, concurrency, plan);
    const until = deniedUntil.get(group);
    if (request.idempotencyKey !== undefined || (until !== undefined && Date.now() < until)) {
      const defer = encode(group, request, groupConcurrency);
      if (!(defer instanceof InputError)) return deferring(base, defer);
      // A payload that cannot be stored only fails a request that would have needed it.
      return guard.admit(base).then((decision) => {
        remember(group, decision);
        if (decision.allowed) return decision;
        throw defer;
      });
    }
    return guard.admitUnreported(base).then((answer) => {
      const defer = answer.decision.allowed || answer.fallback !== undefined ? undefined : encode(group, request, groupConcurrency);
      // Allowed, answered by onStoreError (which never defers), or a payload that cannot be stored: final.
      if (defer === undefined || defer instanceof InputError) {
        guard.report(answer);
        remember(group, answer.decision);
        if (defer instanceof InputError) throw defer;
        return answer.decision;
      }
      return deferring(base, defer);
    });
  };
}

/** The store's input, with `concurrency` and `plan` only when the check has them. */
function admitInput(group: string, weight: number, cost: number, concurrency: number, plan: string | undefined): AdmitInput {
  if (concurrency > 0) return plan === undefined ? { group, weight, cost, concurrency } : { group, weight, cost, concurrency, plan };
  return plan === undefined ? { group, weight, cost } : { group, weight, cost, plan };
}
