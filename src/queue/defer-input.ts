/**
 * Deferral on the limiter: its options (backlog cap, horizon, payload size) and the check of one
 * request's `defer` input (untrusted: InputError, answered 400) into the store's DeferInput.
 */
import { InputError, describeValue } from '../errors';
import type { DeferInput } from '../types';
import { integer } from '../util/validate';
import { resolveDurability, type DurabilityOptions, type ResolvedDurability } from './durability';

/** Limiter options for deferred work (accepted by `createLimiter` next to the admission options). */
export interface DeferLimiterOptions {
  /** Most jobs one group may have waiting (not completed, not dead); beyond it a deferral is a 429. @defaultValue `1000` */
  readonly maxBacklog?: number;
  /** Longest a deferred job may wait before it is due; beyond it the request is a 429 instead. @defaultValue `3_600_000` (1 h) */
  readonly maxDeferMs?: number;
  /** Largest JSON-encoded payload (UTF-8 bytes) a deferred job may carry. @defaultValue `65_536` */
  readonly maxPayloadBytes?: number;
  /**
   * Most jobs of one group running at once, across every worker and process (a crashed worker's slots come
   * back when its leases expire); other groups are not held up by a group at its cap. A check's own
   * `groupConcurrency` overrides it for that job. @defaultValue unlimited
   */
  readonly groupConcurrency?: number;
  /**
   * Confirm a job's write on this many replicas (Redis WAIT) before answering: unconfirmed, a deferral is a
   * 503 and `enqueue` rejects. Needs a RedisStore on a Redis (or Sentinel) client. @defaultValue none
   */
  readonly durability?: DurabilityOptions;
}

export const DEFER_OPTION_NAMES: readonly string[] = Object.freeze(['maxBacklog', 'maxDeferMs', 'maxPayloadBytes', 'groupConcurrency', 'durability']);

export interface ResolvedDeferOptions {
  readonly maxBacklog: number;
  readonly maxDeferMs: number;
  readonly maxPayloadBytes: number;
  /** 0 = unlimited. */
  readonly groupConcurrency: number;
  readonly durability: ResolvedDurability | undefined;
}

/** What a caller asks to defer when the request is denied. */
export interface DeferRequest {
  /** The job type: the Worker runs `handlers[type]`. 1–128 characters. */
  readonly type: string;
  /** Anything JSON can encode; the handler gets it back parsed. @defaultValue `null` */
  readonly payload?: unknown;
  /** Same key, same job: a client retrying a deferred request gets the existing job back. ≤ 256 bytes. */
  readonly idempotencyKey?: string;
}

const MAX_TYPE_LENGTH = 128;
const MAX_IDEMPOTENCY_KEY_BYTES = 256;

export function resolveDeferOptions(options: DeferLimiterOptions): ResolvedDeferOptions {
  return Object.freeze({
    maxBacklog: integer('maxBacklog', options.maxBacklog, { fallback: 1000 }),
    maxDeferMs: integer('maxDeferMs', options.maxDeferMs, { fallback: 3_600_000 }),
    maxPayloadBytes: integer('maxPayloadBytes', options.maxPayloadBytes, { fallback: 65_536 }),
    // 0: no cap
    groupConcurrency: integer('groupConcurrency', options.groupConcurrency, { fallback: 0 }),
    durability: resolveDurability(options.durability),
  });
}

/** Checks one request's deferral but its payload (encoded only when a job is written). Throws InputError. */
export function checkDeferRequest(defer: DeferRequest): void {
  if (typeof defer !== 'object' || defer === null) {
    throw new InputError('ERR_BL_BAD_DEFER', `Expected \`defer\` to be { type, payload?, idempotencyKey? }, got ${describeValue(defer)}`);
  }
  const { type, idempotencyKey } = defer;
  if (typeof type !== 'string' || type.length === 0 || type.length > MAX_TYPE_LENGTH) {
    throw new InputError(
      'ERR_BL_BAD_JOB_TYPE',
      `Expected the job type to be a string of 1–${MAX_TYPE_LENGTH} characters, got ${describeValue(type)}`,
    );
  }
  if (idempotencyKey !== undefined) {
    if (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0 || Buffer.byteLength(idempotencyKey, 'utf8') > MAX_IDEMPOTENCY_KEY_BYTES) {
      throw new InputError(
        'ERR_BL_BAD_IDEMPOTENCY_KEY',
        `Expected the idempotency key to be a string of 1–${MAX_IDEMPOTENCY_KEY_BYTES} bytes, got ${describeValue(idempotencyKey)}`,
      );
    }
  }
}

/** Checks one request's deferral and encodes its payload. Throws InputError. */
export function toDeferInput(defer: DeferRequest, options: ResolvedDeferOptions, groupConcurrency = options.groupConcurrency): DeferInput {
  checkDeferRequest(defer);
  const { type, idempotencyKey } = defer;
  let payload: string | undefined;
  try {
    payload = JSON.stringify(defer.payload === undefined ? null : defer.payload);
  } catch (error) {
    throw new InputError(
      'ERR_BL_BAD_PAYLOAD',
      `The job payload cannot be encoded as JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (payload === undefined)
    throw new InputError('ERR_BL_BAD_PAYLOAD', `The job payload cannot be encoded as JSON, got ${describeValue(defer.payload)}`);
  // One UTF-16 unit is at most 3 UTF-8 bytes: short payloads skip the byte count.
  if (payload.length * 3 > options.maxPayloadBytes && Buffer.byteLength(payload, 'utf8') > options.maxPayloadBytes) {
    throw new InputError(
      'ERR_BL_PAYLOAD_TOO_LARGE',
      `Expected the job payload to be at most ${options.maxPayloadBytes} bytes of JSON, got ${Buffer.byteLength(payload, 'utf8')} bytes`,
    );
  }
  return {
    type,
    payload,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    maxBacklog: options.maxBacklog,
    maxDeferMs: options.maxDeferMs,
    ...(groupConcurrency > 0 ? { groupConcurrency } : {}),
  };
}
