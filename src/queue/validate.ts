/**
 * What the Dispatcher and Worker need from a limiter, and their shared option checks.
 */
import { ConfigError, describeValue } from '../errors';
import type { Logger } from '../types';
import type { QueueStore } from './types';

/** A limiter (from `createLimiter`) or anything else that exposes the limiter's queue operations. */
export interface QueueHolder {
  readonly queue: QueueStore;
}

export function requireQueue(holder: unknown): QueueStore {
  const queue = typeof holder === 'object' && holder !== null ? (holder as { queue?: unknown }).queue : undefined;
  if (typeof queue !== 'object' || queue === null || typeof (queue as QueueStore).claim !== 'function') {
    throw new ConfigError('ERR_BL_LIMITER', `Expected \`limiter\` to be a limiter with a queue (createLimiter(...)), got ${describeValue(holder)}`);
  }
  return queue as QueueStore;
}

/** An integer ≥ `min`, or the default when undefined. */
export function intOption(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`ERR_BL_${name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`, `Expected \`${name}\` to be an integer ≥ ${min}, got ${describeValue(value)}`);
  }
  return value;
}

export function loggerOption(logger: Logger | undefined): Logger {
  if (logger === undefined) return console;
  if (typeof logger !== 'object' || logger === null || typeof logger.warn !== 'function') {
    throw new ConfigError('ERR_BL_LOGGER', `Expected \`logger\` to have a warn(message) method, got ${describeValue(logger)}`);
  }
  return logger;
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : describeValue(error);
}
