/**
 * The one source of time for the limiter's own timers: the Dispatcher's and Worker's loops, a job's lease
 * renewal, and the outage guard's timeouts and probes. The default is the real clock and Node's timers; tests
 * run the same code on a manual scheduler (test/helpers/manual-scheduler.ts) and move time themselves.
 *
 * Internal, not a public option: the public API stays as it was, and users test their own code with their
 * test runner's fake timers. A test attaches a scheduler to an options object with `withScheduler`; each
 * entry point reads it back with `schedulerOf` (the option names users may pass are unchanged).
 */

/** Cancels a timer set with `Scheduler.setTimeout`; calling it again, or after the timer ran, does nothing. */
export type CancelTimer = () => void;

export interface Scheduler {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls `callback` once after `ms`; `ms` ≤ 0 calls it on the next turn of the event loop, after pending I/O
   * (a loop told "again now" still lets I/O run). `unref`: the timer alone does not keep the process running.
   */
  setTimeout(callback: () => void, ms: number, options?: { readonly unref?: boolean }): CancelTimer;
  /** Resolves after `ms`, or at once when `signal` aborts; never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** `sleep` built on a scheduler's `setTimeout`, so every scheduler sleeps the same way. */
export function sleepOn(setTimer: Scheduler['setTimeout'], ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const cancel = setTimer(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

const realSetTimeout: Scheduler['setTimeout'] = (callback, ms, options) => {
  if (ms <= 0) {
    const immediate = setImmediate(callback);
    if (options?.unref) immediate.unref();
    return () => clearImmediate(immediate);
  }
  const timer = setTimeout(callback, ms);
  if (options?.unref) timer.unref();
  return () => clearTimeout(timer);
};

/** `Date.now` and Node's timers. */
export const realScheduler: Scheduler = Object.freeze({
  now: () => Date.now(),
  setTimeout: realSetTimeout,
  sleep: (ms: number, signal?: AbortSignal) => sleepOn(realSetTimeout, ms, signal),
});

const attached = new WeakMap<object, Scheduler>();

/** Attaches `scheduler` to an options object of createLimiter, Dispatcher or Worker (tests); returns the object. */
export function withScheduler<T extends object>(options: T, scheduler: Scheduler): T {
  attached.set(options, scheduler);
  return options;
}

/** The scheduler attached to `options`, or the real one. */
export function schedulerOf(options: unknown): Scheduler {
  return (typeof options === 'object' && options !== null && attached.get(options)) || realScheduler;
}
