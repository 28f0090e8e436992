/**
 * An interruptible sleep for the dispatcher and worker loops: `sleep(ms)` resolves after `ms`, or at once
 * when `wake()` is called (stop, close). `sleep(0)` yields to the event loop (setImmediate), so a loop
 * that is told "call again now" still lets I/O and timers run: it never spins.
 */
import { realScheduler, type Scheduler } from '../util/scheduler';

export class Sleeper {
  private finish: (() => void) | undefined;

  constructor(private readonly scheduler: Scheduler = realScheduler) {}

  sleep(ms: number): Promise<void> {
    this.wake();
    return new Promise<void>((resolve) => {
      const cancel = this.scheduler.setTimeout(() => this.wake(), ms);
      this.finish = () => {
        cancel();
        resolve();
      };
    });
  }

  /** Ends the current sleep, if any. */
  wake(): void {
    const finish = this.finish;
    this.finish = undefined;
    finish?.();
  }
}

/** True when `promise` settled (resolved or rejected) within `ms`; never rejects, leaves no timer behind. */
export async function settlesWithin(promise: Promise<unknown>, ms: number, scheduler: Scheduler = realScheduler): Promise<boolean> {
  let cancel: (() => void) | undefined;
  const timeout = new Promise<false>((resolve) => {
    cancel = scheduler.setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    cancel?.();
  }
}
