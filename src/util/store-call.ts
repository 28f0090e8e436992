/** A store call's time limit (`timeoutMs`) and its failures as StoreError: for the outage guard, health and metrics reads. */
import { StoreError } from '../errors';
import { realScheduler, type Scheduler } from './scheduler';

/** Rejects with a StoreError when `promise` does not settle within `timeoutMs`. */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, scheduler: Scheduler = realScheduler): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = scheduler.setTimeout(
      () => reject(new StoreError('ERR_BL_STORE_TIMEOUT', `The store did not answer within ${timeoutMs} ms`)),
      timeoutMs,
      { unref: true },
    );
    promise.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}

export function toStoreError(error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError('ERR_BL_STORE_FAILED', `The store failed: ${message}`, { cause: error });
}

/** The error and its causes, outermost first (a StoreError wraps the client's error). */
function* causes(error: unknown): Generator<unknown> {
  for (let e = error, depth = 0; e !== undefined && depth < 5; e = (e as { cause?: unknown })?.cause, depth++) yield e;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Redis refused to write: a replica (READONLY), too few replicas online (NOREPLICAS, min-replicas-to-write),
 * or a master that lost its own master link (MASTERDOWN). Reads still succeed, so only a write tells.
 */
export function refusesWrites(error: unknown): boolean {
  for (const e of causes(error)) {
    if (e instanceof StoreError && e.code === 'ERR_BL_STORE_READONLY') return true;
    if (/^(READONLY|NOREPLICAS|MASTERDOWN) /.test(messageOf(e))) return true;
  }
  return false;
}

/**
 * Whether a failed store call certainly wrote nothing: the client never sent it (ioredis with the offline
 * queue off), or Redis refused it before its first write (a script stops at the first refused write, and
 * Redis refuses a write before running it). A timeout, a closed connection or any other failure after the
 * call was sent leaves its outcome unknown: the script may have run.
 */
export function wroteNothing(error: unknown): boolean {
  for (const e of causes(error)) {
    if (e instanceof StoreError && (e.code === 'ERR_BL_STORE_READONLY' || e.code === 'ERR_BL_MAY_EVICT')) return true;
    const message = messageOf(e);
    if (message.startsWith("Stream isn't writeable")) return true;
    if (/^(READONLY|NOREPLICAS|MASTERDOWN|OOM|LOADING|BUSY|MOVED|ASK|TRYAGAIN|CLUSTERDOWN|CROSSSLOT) /.test(message)) return true;
  }
  return false;
}
