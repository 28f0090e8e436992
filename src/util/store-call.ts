/** A store call's time limit (`timeoutMs`) and its failures as StoreError: for the outage guard, health and metrics reads. */
import { StoreError } from '../errors';
import { realScheduler, type CancelTimer, type Scheduler } from './scheduler';

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

/**
 * `withTimeout` for a stream of calls with one time limit, on one timer: calls end their time in the order they
 * started, so a queue of deadlines needs a timer for its head only (a timer per call cost a quarter of a check's
 * CPU on the embedded store). Same answers as `withTimeout`: a call unanswered `timeoutMs` after it started is
 * rejected with ERR_BL_STORE_TIMEOUT; a later answer is ignored. `recover`: a failure or a timeout resolves with what
 * it answers instead (a `.catch(recover)` without a second promise and a second turn per call); `seen`: called with
 * every value the store answers, in time or late (a `.then` without one either).
 */
export function deadlineQueue(
  timeoutMs: number,
  scheduler: Scheduler = realScheduler,
): <T>(promise: Promise<T>, recover?: (error: unknown) => T | PromiseLike<T>, seen?: (value: T) => void) => Promise<T> {
  interface Waiting {
    readonly deadline: number;
    /** Cleared once the call is answered or timed out. */
    reject: ((error: StoreError) => void) | undefined;
  }
  let queue: Waiting[] = [];
  let head = 0;
  let cancelTimer: CancelTimer | undefined;

  const dropAnswered = (): void => {
    while (head < queue.length && queue[head]!.reject === undefined) head++;
    if (head === queue.length) {
      queue = [];
      head = 0;
    } else if (head > 1024 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
  };
  const arm = (): void => {
    if (cancelTimer !== undefined || head === queue.length) return;
    cancelTimer = scheduler.setTimeout(expire, Math.max(1, queue[head]!.deadline - scheduler.now()), { unref: true });
  };
  function expire(): void {
    cancelTimer = undefined;
    const now = scheduler.now();
    for (; head < queue.length; head++) {
      const waiting = queue[head]!;
      if (waiting.reject === undefined) continue;
      if (waiting.deadline > now) break;
      const reject = waiting.reject;
      waiting.reject = undefined;
      reject(new StoreError('ERR_BL_STORE_TIMEOUT', `The store did not answer within ${timeoutMs} ms`));
    }
    dropAnswered();
    arm();
  }

  return <T>(promise: Promise<T>, recover?: (error: unknown) => T | PromiseLike<T>, seen?: (value: T) => void): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const fail =
        recover === undefined
          ? reject
          : (error: unknown): void => {
              try {
                resolve(recover(error));
              } catch (thrown) {
                reject(thrown);
              }
            };
      const waiting: Waiting = { deadline: scheduler.now() + timeoutMs, reject: fail };
      queue.push(waiting);
      arm();
      const answered = (): boolean => {
        if (waiting.reject === undefined) return false;
        waiting.reject = undefined;
        if (queue[head] === waiting) dropAnswered();
        return true;
      };
      promise.then(
        (value) => {
          seen?.(value);
          if (answered()) resolve(value);
        },
        (error: unknown) => {
          if (answered()) fail(error);
        },
      );
    });
}

/**
 * A failed write whose job may exist: the same code (a timeout stays a timeout), the key to retry with in the
 * message and on the error (DESIGN §9: an unknown outcome is never answered as a failure that wrote nothing).
 */
export function withRetryKey(error: unknown, idempotencyKey: string): StoreError {
  const failed = toStoreError(error);
  const message = `${failed.message}; the job may have been written: enqueue it again with idempotencyKey ${JSON.stringify(idempotencyKey)}`;
  return new StoreError(failed.code, message, { cause: failed.cause ?? failed, idempotencyKey });
}

export function toStoreError(error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError('ERR_BL_STORE_FAILED', `The store failed: ${message}`, { cause: error });
}

/** Whether the message of the error or of a cause (a StoreError wraps the client's error) matches. */
function says(error: unknown, pattern: RegExp): boolean {
  for (let e = error, depth = 0; e !== undefined && depth < 5; e = (e as { cause?: unknown })?.cause, depth++) {
    if (pattern.test(e instanceof Error ? e.message : String(e))) return true;
  }
  return false;
}

/** Redis refused to write (READONLY, NOREPLICAS, MASTERDOWN); reads still succeed. */
export const refusesWrites = (error: unknown): boolean => says(error, /^(READONLY|NOREPLICAS|MASTERDOWN) /);

/**
 * Whether a failed call certainly wrote nothing: never sent (offline queue off), or refused by Redis before
 * its first write. Any other failure (a timeout, a closed connection) leaves its outcome unknown.
 */
export const wroteNothing = (error: unknown): boolean =>
  says(error, /^(Stream isn't writeable|(READONLY|NOREPLICAS|MASTERDOWN|OOM|LOADING|BUSY|MOVED|ASK|TRYAGAIN|CLUSTERDOWN|CROSSSLOT) )/);
