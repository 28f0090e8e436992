/**
 * Offload: work put on the queue directly (`limiter.enqueue`), not only denied requests. It takes the same
 * path as a deferred request's job (fair order, the budget spent when it starts, backlog cap, horizon); the
 * options are checked here (InputError), a refusal is an `EnqueueError` carrying when to try again.
 */
import { BulkLimiterError, InputError, describeValue } from '../errors';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import { codeOf, isIntegerIn } from '../util/validate';
import { toDeferInput, type DeferRequest, type ResolvedDeferOptions } from './defer-input';
import type { EnqueueInput, EnqueueResult } from '../types';

export interface EnqueueOptions extends DeferRequest {
  /** Due after this many ms (0 = now). At most `maxDeferMs`. @defaultValue `0` */
  readonly delayMs?: number;
  /** The group's weight for this job's fair share. @defaultValue `1` */
  readonly weight?: number;
  /** Units the job spends when it starts. @defaultValue `1` */
  readonly cost?: number;
  /** Most jobs of this group running at once. @defaultValue the limiter's `groupConcurrency` */
  readonly groupConcurrency?: number;
  /** Runs ending in an error before the job goes to dead (over the Worker's `maxAttempts`). */
  readonly maxAttempts?: number;
  /**
   * A plan of the limiter: the job takes its weight (unless `weight` is given) and starts under its rules, as a
   * check of that plan would. @defaultValue the limiter's `defaultPlan`
   */
  readonly plan?: string;
  /**
   * `cost` is an estimate: the job's start reserves it and its handler settles the units the work really took
   * with `job.settle(actual)` (docs/settle.md). @defaultValue `false`
   */
  readonly settle?: boolean;
  /**
   * A priority class of the limiter (`classes`): the job starts in that class, spending its share as a check of
   * that class would. @defaultValue the plan's `class`, else `'default'`
   */
  readonly class?: string;
}

/** What `enqueue` answers: the job, and whether an idempotency key named an existing one. */
export interface EnqueuedJob {
  readonly id: string;
  /** When the job is due (ms since the epoch, store clock); it starts once the budget allows. */
  readonly runAt: number;
  readonly duplicate: boolean;
}

/** The queue refused a job: the group's backlog is full, or `delayMs` is beyond `maxDeferMs`. */
export class EnqueueError extends BulkLimiterError {
  constructor(
    code: 'ERR_BL_BACKLOG_FULL' | 'ERR_BL_DEFER_HORIZON',
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(code, message);
  }
}

const ENQUEUE_OPTIONS: OptionNames<EnqueueOptions> = {
  type: true,
  payload: true,
  idempotencyKey: true,
  delayMs: true,
  weight: true,
  cost: true,
  groupConcurrency: true,
  maxAttempts: true,
  plan: true,
  settle: true,
  class: true,
};
const ENQUEUE_OPTION_NAMES = Object.keys(ENQUEUE_OPTIONS);

function optionalInt(name: string, value: unknown, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!isIntegerIn(value, min, max)) {
    throw new InputError(codeOf(name, 'BAD_'), `Expected \`${name}\` to be an integer from ${min} to ${max}, got ${describeValue(value)}`);
  }
  return value;
}

export interface OffloadLimits {
  readonly maxCost: number;
  readonly maxWeight: number;
  readonly windowMs: number;
}

/**
 * Checks `enqueue`'s options (InputError) into the store's EnqueueInput; `group` is checked by the caller, and so
 * are `plan` (the limiter resolves it: here its name and weight) and `class` (the limiter adds it).
 */
export function toEnqueueInput(
  group: string,
  options: EnqueueOptions,
  defer: ResolvedDeferOptions,
  limits: OffloadLimits,
  plan?: { readonly name: string; readonly weight?: number | undefined },
): EnqueueInput {
  if (typeof options !== 'object' || options === null) {
    throw new InputError('ERR_BL_BAD_DEFER', `Expected enqueue options { type, payload?, … }, got ${describeValue(options)}`);
  }
  refuseUnknownOptions(options, ENQUEUE_OPTION_NAMES, 'enqueue()');
  const delayMs = optionalInt('delayMs', options.delayMs, 0, Number.MAX_SAFE_INTEGER) ?? 0;
  const weight = optionalInt('weight', options.weight, 1, limits.maxWeight) ?? plan?.weight ?? 1;
  const cost = optionalInt('cost', options.cost, 1, limits.maxCost) ?? 1;
  const cap = optionalInt('groupConcurrency', options.groupConcurrency, 1, 1_000_000) ?? defer.groupConcurrency;
  const maxAttempts = optionalInt('maxAttempts', options.maxAttempts, 1, 1_000_000);
  if (options.settle !== undefined && typeof options.settle !== 'boolean') {
    throw new InputError('ERR_BL_BAD_SETTLE', `Expected \`settle\` to be a boolean, got ${describeValue(options.settle)}`);
  }
  const job = toDeferInput(options, defer, cap);
  return {
    ...job,
    group,
    weight,
    cost,
    delayMs,
    ...(job.idempotencyKey === undefined ? {} : { idempotencyKey: job.idempotencyKey }),
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...(plan === undefined ? {} : { plan: plan.name }),
    ...(options.settle === true ? { settle: true } : {}),
  };
}

/** The store's answer as the caller sees it: a job, or an EnqueueError. */
export function toEnqueuedJob(result: EnqueueResult, input: EnqueueInput, limits: OffloadLimits): EnqueuedJob {
  switch (result.status) {
    case 'written':
    case 'duplicate':
      return { id: result.id, runAt: result.runAt, duplicate: result.status === 'duplicate' };
    case 'backlog-full':
      throw new EnqueueError('ERR_BL_BACKLOG_FULL', `The group's backlog is full (maxBacklog ${input.maxBacklog}); try again later`, limits.windowMs);
    case 'defer-horizon':
      throw new EnqueueError(
        'ERR_BL_DEFER_HORIZON',
        `The job would be due beyond maxDeferMs (${input.maxDeferMs} ms)`,
        Math.max(1, input.delayMs - input.maxDeferMs),
      );
  }
}
