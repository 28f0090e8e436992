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
