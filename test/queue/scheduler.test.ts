/**
 * The scheduler the Dispatcher, Worker and outage guard take their time from: the real one's timers and
 * sleep, how a test attaches a manual one, and the manual one's order of timers.
 */
import { realScheduler, schedulerOf, withScheduler } from '../../src/util/scheduler';
import { ManualScheduler, settle } from '../helpers/manual-scheduler';

describe('realScheduler', () => {
  test('sleep resolves at once when its signal aborts, and at once for a signal already aborted', async () => {
    const controller = new AbortController();
    let done = false;
    void realScheduler.sleep(60_000, controller.signal).then(() => void (done = true));
    await settle();
    expect(done).toBe(false);
    controller.abort();
    await settle();
    expect(done).toBe(true);
    await expect(realScheduler.sleep(60_000, controller.signal)).resolves.toBeUndefined();
  });

  test('a cancelled timer never runs; 0 ms runs after the current turn, not within it', async () => {
    const ran: string[] = [];
    const cancel = realScheduler.setTimeout(() => ran.push('cancelled'), 0);
    realScheduler.setTimeout(() => ran.push('zero'), 0);
    cancel();
    expect(ran).toEqual([]);
    await settle();
    expect(ran).toEqual(['zero']);
  });
});

describe('withScheduler / schedulerOf', () => {
  test('an options object carries the scheduler attached to it; any other gets the real one', () => {
    const clock = new ManualScheduler();
    const options = withScheduler({ limit: 1 }, clock);
    expect(schedulerOf(options)).toBe(clock);
    expect(schedulerOf({ limit: 1 })).toBe(realScheduler);
    expect(schedulerOf(undefined)).toBe(realScheduler);
    // Nothing is added to the object: the option names users may pass are unchanged.
    expect(Object.keys(options)).toEqual(['limit']);
  });
});

describe('ManualScheduler', () => {
  test('runs due timers in order of due time (ties in the order set), including timers set meanwhile', async () => {
    const clock = new ManualScheduler(0);
    const ran: string[] = [];
    clock.setTimeout(() => ran.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => ran.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => {
      ran.push(`c@${clock.now()}`);
      clock.setTimeout(() => ran.push(`d@${clock.now()}`), 5); // due at 25, within this advance
    }, 20);
    const cancel = clock.setTimeout(() => ran.push('never'), 15);
    cancel();
    await clock.advance(24);
    expect(ran).toEqual(['a@10', 'b@20', 'c@20']);
    expect(clock.now()).toBe(24);
    await clock.advance(1);
    expect(ran).toEqual(['a@10', 'b@20', 'c@20', 'd@25']);
    expect(clock.pending).toBe(0);
  });

  test('a loop that sleeps 0 ms forever is reported, not run forever', async () => {
    const clock = new ManualScheduler(0);
    const spin = (): void => void clock.setTimeout(spin, 0);
    spin();
    await expect(clock.advance(1)).rejects.toThrow(/a loop spins/);
  });
});
