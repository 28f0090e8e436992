/**
 * A rejected request as both adapters answer it: the RFC 9457 problem (429 over quota or a full queue, 503 on a
 * store outage, 400 for bad request data), the problem+json body, and the http-error with `expose`, `headers`
 * and the Decision that `onLimit: 'next'` hands on.
 */
import createError, { type HttpError } from 'http-errors';
import type { InputError } from '../errors';
import { cachedBySeconds, retryAfterSeconds, type HeaderMap } from './headers';
import type { EnqueueError } from '../queue/offload';
import type { Decision } from '../types';

/** The http-error of a rejected request. */
export interface LimitError extends HttpError {
  readonly headers: HeaderMap;
  /** The RFC 9457 problem object the middleware sends in `'respond'` mode. */
  readonly problem: ProblemDetails;
  /** Present on 429 and 503. */
  readonly decision?: Decision;
}

export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly 'violated-policies'?: readonly string[];
}

/**
 * A rejected request: what `'respond'` sends (status, headers, problem+json body), and the http-error that
 * `'next'` hands on, built only when asked for (an http-error is a sizeable part of a denial's CPU; see the deny rows of
 * bench/results/http.md).
 */
export interface Rejection {
  readonly kind: 'reject';
  readonly status: number;
  readonly headers: HeaderMap;
  /** The problem+json body. */
  readonly body: string;
  readonly error: LimitError;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
export const QUOTA_EXCEEDED = 'https://iana.org/assignments/http-problem-types#quota-exceeded';
export const REDUCED_CAPACITY = 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity';

/** The 429 body, JSON.stringify(problem) to the byte, from a template: the only part that varies is the wait. */
export function quotaBodyWriter(policies: readonly string[]): (seconds: number) => string {
  const head = `{"type":${JSON.stringify(QUOTA_EXCEEDED)},"title":"Too Many Requests","status":429,"detail":"Too many requests; retry in `;
  const tail = ` s.","violated-policies":${JSON.stringify(policies)}}`;
  // a flood's denials wait a few seconds each, staggered over a window: one body per wait, made once
  return cachedBySeconds((seconds) => head + seconds + tail);
}

/** The 429's problem details (RFC 9457): the policies that said no, and when to retry. */
function quotaProblem(seconds: number, policies: readonly string[]): ProblemDetails {
  return {
    type: QUOTA_EXCEEDED,
    title: 'Too Many Requests',
    status: 429,
    detail: `Too many requests; retry in ${seconds} s.`,
    'violated-policies': policies,
  };
}

/** A job the queue refused (full backlog, horizon): a 429 with the queue's Retry-After and no admission decision. */
export function queueFullRejection(error: EnqueueError, policies: readonly string[], quotaBody: (seconds: number) => string): Rejection {
  const seconds = retryAfterSeconds(error.retryAfterMs);
  const headers: HeaderMap = { 'Retry-After': String(seconds) };
  const problem = quotaProblem(seconds, policies);
  const httpError = withoutStack(() => createError(429, problem.detail, { expose: true, headers, problem, code: error.code }) as LimitError);
  return { kind: 'reject', status: 429, headers, body: quotaBody(seconds), error: httpError };
}

/** A rejection whose problem object and http-error are made only when `'next'` (or Nest) asks for the error. */
class LazyRejection implements Rejection {
  readonly kind = 'reject';
  private made: LimitError | undefined;

  constructor(
    readonly status: number,
    readonly headers: HeaderMap,
    readonly body: string,
    private readonly decision: Decision,
    /** The policies that said no (429); undefined: the store failed (503). */
    private readonly policies: readonly string[] | undefined,
  ) {}

  get error(): LimitError {
    const { headers, decision } = this;
    if (this.made === undefined) {
      const problem =
        this.policies === undefined ? unavailableProblem(decision) : quotaProblem(retryAfterSeconds(decision.retryAfterMs), this.policies);
      this.made = withoutStack(() => createError(problem.status, problem.detail, { expose: true, headers, decision, problem }) as LimitError);
    }
    return this.made;
  }
}

/** The 503's problem details: the store failed and its policy is `'deny'`. */
function unavailableProblem(decision: Decision): ProblemDetails {
  return {
    type: REDUCED_CAPACITY,
    title: 'Service Unavailable',
    status: 503,
    detail: `The rate limiter is temporarily unavailable; retry in ${retryAfterSeconds(decision.retryAfterMs)} s.`,
  };
}

/** A denied decision: 503 when the store failed (policy `'deny'`), else a 429 naming the policies that said no. */
export function limitRejection(
  decision: Decision,
  headers: HeaderMap,
  policies: readonly string[],
  quotaBody: (seconds: number) => string,
): Rejection {
  if (decision.reason === 'store-error') {
    // A deferral whose outcome is unknown: the retry must carry this key to land on the job, if it was written.
    if (decision.idempotencyKey !== undefined) headers = { ...headers, 'Idempotency-Key': decision.idempotencyKey };
    return new LazyRejection(503, headers, JSON.stringify(unavailableProblem(decision)), decision, undefined);
  }
  return new LazyRejection(429, headers, quotaBody(retryAfterSeconds(decision.retryAfterMs)), decision, policies);
}

/** A 429 is an answer, not a bug: its stack trace says nothing and capturing it is a sizeable part of a denial's cost. */
function withoutStack<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export function badRequest(error: InputError): Rejection {
  const problem: ProblemDetails = { type: 'about:blank', title: 'Bad Request', status: 400, detail: error.message };
  const httpError = createError(400, error.message, { expose: true, headers: {}, problem, code: error.code, cause: error }) as LimitError;
  return { kind: 'reject', status: 400, headers: httpError.headers, body: JSON.stringify(problem), error: httpError };
}
