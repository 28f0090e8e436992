/**
 * A check that may defer. A denied request's job is written in the same store call as its decision, so its
 * payload travels with that call; an allowed request needs none. So the payload is encoded only for a group
 * this process saw denied within the last window (it is likely denied now): that check goes in one call, payload
 * included. Any other check goes first without it and, denied by the store, comes again with it (the second
 * call decides afresh: a unit freed meanwhile admits it). Only the final decision is reported to observers.
 * A check with an idempotency key always goes in one call: the key must be looked up before anything is
 * decided, or a retried request whose job exists could run now as well.
 *
 * Every deferral carries an idempotency key (generated when the caller sent none). A deferring call with an
 * unknown outcome may have written its job: it is a 'store-error' denial (503) carrying the key, which a retry
 * finds the job by; never 429 or allowed. The policy's denial of a check that could defer is that 503 too.
 */
import { randomBytes } from 'node:crypto';
import { InputError, type StoreError } from '../errors';
import type { Answer, OutageGuard } from './outage/outage';
import { unresolved } from './outage/outage-policy';
import type { Durability } from '../queue/durability';
import { checkDeferRequest, toDeferInput, type DeferRequest, type ResolvedDeferOptions } from '../queue/defer-input';
import type { AdmitInput, Decision } from '../types';

/** Groups remembered as denied at once; past it the memory starts afresh (a miss costs one more call). */
const MAX_REMEMBERED = 10_000;
/** The least Retry-After of an unknown outcome. */
const UNKNOWN_RETRY_MS = 1000;

/** A deferral's key when the caller sent none: 96 random bits, short (the record and the idempotency hash keep it). */
export const generatedKey = (): string => `bl-${randomBytes(12).toString('base64url')}`;

export interface DeferringCheckDeps {
  readonly guard: OutageGuard;
  readonly durable: Durability | undefined;
  readonly deferOptions: ResolvedDeferOptions;
  /** The limiter's window: a group denied within it is likely denied again (a flood stays denied). */
  readonly windowMs: number;
  /** Scopes an idempotency key to its group (one tenant's key never names another's job). */
  readonly scope: (group: string, defer: NonNullable<AdmitInput['defer']>) => NonNullable<AdmitInput['defer']>;
  /** While Redis may evict the queue's keys: no job is written (a denied check is a 503), see ./health.ts. */
  readonly evicting?: () => StoreError | undefined;
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
  cls?: string,
) => Promise<Decision>;

export function createDeferringCheck({ guard, durable, deferOptions, windowMs, scope, evicting }: DeferringCheckDeps): DeferringCheck {
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

  /** The final answer to a check that could defer: the store's decision, or one the policy may give. */
  const settle = (answer: Answer, key: string, noJob = false): Decision => {
    const { decision, fallback } = answer;
    const storeDecided = fallback === undefined && (decision.allowed || !noJob);
    const final = storeDecided || (decision.allowed && !answer.unknown) ? decision : unresolved(decision, key, UNKNOWN_RETRY_MS);
    guard.report(final === decision ? answer : { decision: final, fallback });
    return final;
  };

  const deferring = (base: AdmitInput, defer: NonNullable<AdmitInput['defer']>, key: string): Promise<Decision> => {
    const group = base.group;
    return guard.admitUnreported({ ...base, defer }).then(async (answer) => {
      if (answer.fallback !== undefined || !durable) {
        if (answer.fallback === undefined) remember(group, answer.decision);
        return settle(answer, key);
      }
      remember(group, answer.decision);
      const confirmed = await durable.confirm(answer.decision);
      // Unconfirmed: the job was written, but maybe on this master only; the retry with its key finds it.
      const final = confirmed === answer.decision ? confirmed : unresolved(confirmed, key, UNKNOWN_RETRY_MS);
      guard.report({ decision: final, fallback: undefined });
      return final;
    });
  };

  return (group, weight, cost, request, groupConcurrency, concurrency, plan, cls) => {
    checkDeferRequest(request);
    const input = admitInput(group, weight, cost, concurrency, plan);
    const base = cls === undefined ? input : { ...input, class: cls };
    const clientKeyed = request.idempotencyKey !== undefined;
    const keyed = clientKeyed ? request : { ...request, idempotencyKey: generatedKey() };
    const key = keyed.idempotencyKey!;
    // A job Redis may evict would be a 202 broken later: decided without one, a denial is a 503.
    if (evicting?.()) return guard.admitUnreported(base).then((answer) => settle(answer, key, true));
    const until = deniedUntil.get(group);
    if (clientKeyed || (until !== undefined && Date.now() < until)) {
      const defer = encode(group, keyed, groupConcurrency);
      if (!(defer instanceof InputError)) return deferring(base, defer, key);
      // A payload that cannot be stored only fails a request that would have needed it.
      return guard.admit(base).then((decision) => {
        remember(group, decision);
        if (decision.allowed) return decision;
        throw defer;
      });
    }
    return guard.admitUnreported(base).then((answer) => {
      if (answer.fallback !== undefined) return settle(answer, key); // the policy answered: no job to write
      const defer = answer.decision.allowed ? undefined : encode(group, keyed, groupConcurrency);
      // Allowed, or a payload that cannot be stored: final.
      if (defer === undefined || defer instanceof InputError) {
        guard.report(answer);
        remember(group, answer.decision);
        if (defer instanceof InputError) throw defer;
        return answer.decision;
      }
      return deferring(base, defer, key);
    });
  };
}

/** The store's input, with `concurrency` and `plan` only when the check has them. */
function admitInput(group: string, weight: number, cost: number, concurrency: number, plan: string | undefined): AdmitInput {
  if (concurrency > 0) return plan === undefined ? { group, weight, cost, concurrency } : { group, weight, cost, concurrency, plan };
  return plan === undefined ? { group, weight, cost } : { group, weight, cost, plan };
}

/** One tenant's idempotency key can never name another tenant's job: the key is prefixed by its group. */
export function scopeIdempotency(group: string, defer: AdmitInput['defer'] & object): AdmitInput['defer'] & object {
  if (defer.idempotencyKey === undefined) return defer;
  return { ...defer, idempotencyKey: scopedKey(group, defer.idempotencyKey) };
}

export function scopedKey(group: string, key: string): string {
  return `${Buffer.byteLength(group, 'utf8')}:${group}:${key}`;
}
