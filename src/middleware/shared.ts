/**
 * Everything the Express and Koa adapters share: middleware options (validated once), the group / cost /
 * weight / skip steps, and the outcome of one request — pass (with headers) or reject (an http-error with
 * `expose`, `headers`, the Decision and an RFC 9457 problem body; built in ./rejection.ts). The adapters only translate an outcome
 * to their framework. With `defer`, a denied request that was written as a job is a `'deferred'` outcome:
 * 202 Accepted, `Location` (the job's status URL), body `{ jobId, state, runAt }` and the RateLimit headers.
 *
 * Codes: ConfigError ERR_BL_OPTIONS, ERR_BL_UNKNOWN_OPTION, ERR_BL_LIMITER, ERR_BL_GROUP, ERR_BL_SKIP,
 * ERR_BL_MISSING_GROUP, ERR_BL_HEADERS, ERR_BL_ON_LIMIT, ERR_BL_WEIGHT, ERR_BL_COST, ERR_BL_PLAN (at construction; a
 * constant cost / weight above the limiter's maxCost / maxWeight too); 400 for request data, with the
 * InputError's code: ERR_BL_NO_GROUP, ERR_BL_GROUP_EMPTY, ERR_BL_BAD_GROUP, ERR_BL_GROUP_TOO_LONG, ERR_BL_GROUP_MALFORMED, …;
 * 500 + WRN_BL_OPTION_RESULT when a function option gives an unusable value (./misconfigured.ts);
 * warning WRN_BL_MISSING_GROUP (once per middleware).
 */
import { ConfigError, InputError, describeValue } from '../errors';
import type { HeaderMap } from './headers';
import { createLimiter, type CheckOptions, type Limiter } from '../limiter/limiter';
import { isDegraded } from '../limiter/outage/outage-policy';
import { reservedGroup } from '../limiter/group-id';
import type { Decision } from '../types';
import { clientGroup, resolveIpv6Subnet } from './client-ip';
import { deferredOutcome, offloadedOutcome, statusLocation, type DeferredOutcome } from './defer';
import { EnqueueError, type EnqueueOptions } from '../queue/offload';
import { limiterOptionsOf, validateMiddlewareOptions, type BulkLimiterOptions } from './middleware-options';
import { createMisconfigured, isIntUpTo } from './misconfigured';
import { createPlanStep, type PolicyView } from './plan-step';
import { badRequest, limitRejection, queueFullRejection, quotaBodyWriter, type Rejection } from './rejection';

export type { DeferOptions, DeferredBody } from './defer';
export type { BulkLimiterOptions } from './middleware-options';

export type Outcome = { readonly kind: 'pass'; readonly headers: HeaderMap; readonly decision: Decision | undefined } | Rejection | DeferredOutcome;

export interface Runner<Ctx> {
  evaluate(ctx: Ctx): Promise<Outcome>;
  readonly onLimit: 'respond' | 'next';
  readonly limiter: Limiter;
}

/** The group of requests without one when `missingGroup: 'shared'`. */
export const SHARED_GROUP = '(missing)';

const EMPTY_CHECK: CheckOptions = Object.freeze({});
/** As the limiter's `check` accepts. */
const MAX_GROUP_CONCURRENCY = 1_000_000;
const SKIPPED: Outcome = Object.freeze({ kind: 'pass', headers: Object.freeze({}), decision: undefined });

/** What the middleware reads from a request in either framework. */
export interface RequestReader<Ctx> {
  clientIp(ctx: Ctx): string | undefined;
  header(ctx: Ctx, name: string): string | undefined;
}

export function createRunner<Ctx>(options: BulkLimiterOptions<Ctx>, reader: RequestReader<Ctx>): Runner<Ctx> {
  const o = validateMiddlewareOptions(options);
  const limiter = o.limiter ?? createLimiter(limiterOptionsOf(o));
  const ipv6Subnet = resolveIpv6Subnet(o.ipv6Subnet);
  const groupOf = o.group ?? ((ctx: Ctx) => clientGroup(reader.clientIp(ctx), ipv6Subnet));
  const defer = o.defer;
  const location = defer && statusLocation(defer, limiter.options.logger, limiter.name);
  const rejectMissing = o.missingGroup === 'reject';
  const { weight, cost, skip } = o;
  const { maxCost, maxWeight } = limiter.options;
  // A constant beyond the limiter's maximum would fail every request: refuse it now.
  if (typeof cost === 'number' && cost > maxCost) {
    throw new ConfigError('ERR_BL_COST', `Expected \`cost\` to be at most the limiter's \`maxCost\` (${maxCost}), got ${describeValue(cost)}`);
  }
  if (typeof weight === 'number' && weight > maxWeight) {
    throw new ConfigError(
      'ERR_BL_WEIGHT',
      `Expected \`weight\` to be at most the limiter's \`maxWeight\` (${maxWeight}), got ${describeValue(weight)}`,
    );
  }
  const misconfigured = createMisconfigured(limiter.options.logger, limiter.name);
  const policies = Object.freeze([limiter.name]);
  const quotaBody = quotaBodyWriter(policies);
  const planStep = createPlanStep(limiter, o.headers ?? 'draft', o.plan, misconfigured);
  // settle: the decision carries settle(actual) (docs/settle.md)
  const settle = o.settle === true;
  if (settle && limiter.spec.classes !== undefined) {
    // every check of such a limiter is decided in a class, which a reservation cannot settle in yet (limiter.check refuses it)
    throw new ConfigError('ERR_BL_SETTLE', 'Expected `settle` to be false with a limiter that has `classes` (docs/settle.md), got true');
  }
  const classOf = o.class;
  const classes = limiter.spec.classes;
  const knownClasses = classes === undefined ? 'the limiter has no `classes`' : [...classes.keys()].map((n) => JSON.stringify(n)).join(', ');
  // only the options given: check() loops over the keys of its options, per request
  const constantCheck: CheckOptions | undefined =
    typeof weight !== 'function' && typeof cost !== 'function'
      ? Object.freeze({ ...(weight === undefined ? {} : { weight }), ...(cost === undefined ? {} : { cost }), ...(settle ? { settle } : {}) })
      : undefined;
  let warnedMissing = false;

  /**
   * The common case, a constant cost and weight with no skip, plan, class or defer function: a string group goes straight
   * to the check, whose decision becomes the outcome in one `then` with functions made once (no async layer, no
   * closure per request, no await of a value that is not a promise). `settle: true` rides in constantCheck: the
   * decision the check answers carries its settle(actual) on this path too.
   */
  const lean = skip === undefined && constantCheck !== undefined && planStep.step === undefined && classOf === undefined && defer === undefined;
  const leanOutcome = (decision: Decision): Outcome => outcomeOf(decision, planStep.view);
  const leanFailure = (error: unknown): Outcome => checkFailed(error, constantCheck!);

  function evaluate(ctx: Ctx): Promise<Outcome> {
    if (!lean) return evaluateFully(ctx);
    let group: ReturnType<typeof groupOf>;
    try {
      group = groupOf(ctx);
    } catch (error) {
      return Promise.reject(error);
    }
    if (typeof group === 'string' && group !== '' && group !== SHARED_GROUP)
      return limiter.check(group, constantCheck).then(leanOutcome, leanFailure);
    return afterGroup(ctx, group);
  }

  async function evaluateFully(ctx: Ctx): Promise<Outcome> {
    if (skip !== undefined) {
      const skipped = await skip(ctx);
      if (skipped === true) return SKIPPED;
      if (skipped !== false) return misconfigured('skip', skipped, 'a boolean');
    }
    return afterGroup(ctx, groupOf(ctx));
  }

  /** Everything after the group function: `given` is what it returned (awaited here). */
  async function afterGroup(ctx: Ctx, given: ReturnType<typeof groupOf>): Promise<Outcome> {
    let group = await given;
    if (group === undefined || group === null || group === '') {
      if (rejectMissing) return badRequest(new InputError('ERR_BL_NO_GROUP', 'The request has no group id'));
      if (!warnedMissing) {
        warnedMissing = true;
        limiter.options.logger.warn(
          `WRN_BL_MISSING_GROUP: a request without a group id was counted in the shared group "${SHARED_GROUP}" (limiter "${limiter.name}"; check \`group\` and, for client IPs, trust proxy)`,
        );
      }
      group = SHARED_GROUP;
    } else if (typeof group !== 'string') {
      // Arrays and objects come from request parsers (`?t=a&t=b`): request data, a 400. A number, boolean
      // or function does not: the server's bug.
      if (typeof group !== 'object') return misconfigured('group', group, 'a string, or undefined / null for none');
      return badRequest(new InputError('ERR_BL_BAD_GROUP', `Expected the group id to be a string, got ${describeValue(group)}`));
    } else if (group === SHARED_GROUP) {
      // The shared group of requests without one: a request naming it would spend their quota.
      return badRequest(reservedGroup(group));
    }
    let check: CheckOptions = constantCheck ?? EMPTY_CHECK;
    if (constantCheck === undefined) {
      // no weight: the plan's, or 1
      const w = typeof weight === 'function' ? await weight(group, ctx) : weight;
      if ((w !== undefined || weight !== undefined) && !isIntUpTo(w, maxWeight))
        return misconfigured('weight', w, `an integer from 1 to ${maxWeight} (\`maxWeight\`)`);
      const c = typeof cost === 'function' ? await cost(ctx) : (cost ?? 1);
      if (!isIntUpTo(c, maxCost)) return misconfigured('cost', c, `an integer from 1 to ${maxCost} (\`maxCost\`)`);
      check = settle ? { weight: w, cost: c, settle } : { weight: w, cost: c };
    }
    let view = planStep.view;
    if (planStep.step !== undefined) {
      const planned = await planStep.step(group, ctx, check);
      if (planned.kind === 'reject') return planned;
      view = planned.view;
      check = planned.check;
    }
    if (classOf !== undefined) {
      const cls = await classOf(group, ctx);
      if (cls !== undefined) {
        if (typeof cls !== 'string' || classes?.has(cls) !== true)
          return misconfigured('class', cls, `undefined or the name of a class of the limiter (${knownClasses})`);
        check = { ...check, class: cls };
      }
    }
    if (defer !== undefined) {
      // The payload is built up front (a denied request may need it at once); the limiter encodes it only when a job is written.
      let idempotencyKey: unknown;
      if (defer.idempotencyKey) {
        idempotencyKey = await defer.idempotencyKey(ctx);
        if (idempotencyKey !== undefined && typeof idempotencyKey !== 'string') {
          return misconfigured('defer.idempotencyKey', idempotencyKey, 'a string or undefined');
        }
      } else idempotencyKey = reader.header(ctx, 'idempotency-key');
      const payload = defer.payload ? await defer.payload(ctx) : null;
      const job = { type: defer.type, payload, ...(idempotencyKey ? { idempotencyKey: idempotencyKey as string } : {}) };
      let cap: unknown = defer.groupConcurrency;
      if (typeof cap === 'function') {
        cap = await cap(group, ctx);
        if (!isIntUpTo(cap, MAX_GROUP_CONCURRENCY))
          return misconfigured('defer.groupConcurrency', cap, `an integer from 1 to ${MAX_GROUP_CONCURRENCY}`);
      }
      const groupConcurrency = cap as number | undefined;
      if (defer.when === 'always') {
        // a queued job has no plan yet: it keeps the plan's weight
        const { plan, class: _class, ...sized } = check;
        const weighted = plan === undefined || sized.weight !== undefined ? sized : { ...sized, weight: limiter.spec.plans?.get(plan)?.weight };
        return offload(group, { ...job, ...weighted, ...(groupConcurrency ? { groupConcurrency } : {}) }, ctx);
      }
      check = { ...check, defer: job, ...(groupConcurrency ? { groupConcurrency } : {}) };
    }
    let decision: Decision;
    try {
      decision = await limiter.check(group, check);
    } catch (error) {
      return checkFailed(error, check);
    }
    if (defer !== undefined && !decision.allowed && decision.job !== undefined) {
      return deferredOutcome(limiter, location!, decision, view.writeHeaders(decision, !isDegraded(decision)), ctx);
    }
    return outcomeOf(decision, view);
  }

  /** A decision with no job as the request's outcome: pass, or the 429 / 503 of the policy that said no. */
  function outcomeOf(decision: Decision, view: PolicyView): Outcome {
    const headers = view.writeHeaders(decision, !isDegraded(decision));
    if (decision.allowed) return { kind: 'pass', headers, decision };
    const policy = decision.policy;
    const rule = policy === undefined ? undefined : view.rulePolicies.get(policy);
    if (rule !== undefined) return limitRejection(decision, headers, rule.policies, rule.quotaBody);
    // an override's rule or its block (docs/runtime-policies.md): the policy the decision names
    if (policy !== undefined && policy !== 'global' && policy !== 'concurrency') {
      return limitRejection(decision, headers, [policy], quotaBodyWriter([policy]));
    }
    return limitRejection(decision, headers, policies, quotaBody);
  }

  /** A check that failed: the caller's request data (400) or the server's payload (500); anything else is thrown on. */
  function checkFailed(error: unknown, check: CheckOptions): Outcome {
    if (!(error instanceof InputError)) throw error;
    // The payload is the server's own object: one JSON cannot encode (BigInt, a cycle) is its bug.
    if (error.code === 'ERR_BL_BAD_PAYLOAD') return misconfigured('defer.payload', check.defer?.payload, `a JSON-encodable value (${error.message})`);
    return badRequest(error);
  }

  /** `defer.when: 'always'`: the request becomes a job whatever the budget; a refused one is a 429. */
  async function offload(group: string, job: EnqueueOptions, ctx: Ctx): Promise<Outcome> {
    try {
      return offloadedOutcome(location!, await limiter.enqueue(group, job), ctx);
    } catch (error) {
      if (error instanceof EnqueueError) return queueFullRejection(error, policies, quotaBody);
      if (!(error instanceof InputError)) throw error;
      if (error.code === 'ERR_BL_BAD_PAYLOAD') return misconfigured('defer.payload', job.payload, `a JSON-encodable value (${error.message})`);
      return badRequest(error);
    }
  }

  return { evaluate, onLimit: o.onLimit ?? 'respond', limiter };
}
