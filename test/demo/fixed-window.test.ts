/** The demo's baseline must really be the original design, flaws included, or the comparison means nothing. */
import { fairShares } from './scenario-api';

interface BaselineDecision {
  allowed: boolean;
  limit: number;
  retryAfterMs: number;
  job?: { id: string };
}
interface Baseline {
  check(group: string, options?: { cost?: number; defer?: { type: string; payload: unknown } }): Promise<BaselineDecision>;
  startWorkers(options: { handlers: Record<string, (job: { payload: unknown }) => Promise<unknown>>; concurrency: number }): {
    close(): Promise<void>;
  };
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { FixedWindowLimiter } = require('../../examples/demo/fixed-window') as {
  FixedWindowLimiter: new (options: { limit: number; windowMs?: number; clock?: () => number }) => Baseline;
};

async function admitted(limiter: Baseline, group: string, n: number): Promise<number> {
  let count = 0;
  for (let i = 0; i < n; i++) if ((await limiter.check(group)).allowed) count++;
  return count;
}

describe('FixedWindowLimiter (the original design, for the demo)', () => {
  it('splits the window by floor(limit / groups ever seen), and never forgets a group', async () => {
    let now = 10_000;
    const limiter = new FixedWindowLimiter({ limit: 10, clock: () => now });
    expect(await admitted(limiter, 'a', 20)).toBe(10);
    now += 1000;
    await limiter.check('b');
    await limiter.check('c'); // three groups: floor(10 / 3) = 3 each, one unit lost to floor()
    expect(await admitted(limiter, 'a', 20)).toBe(3);
    now += 60_000; // b and c long gone: the share still counts them
    expect(await admitted(limiter, 'a', 20)).toBe(3);
  });

  it('lets a whole window through at each window edge: 2× the limit within a few ms', async () => {
    let now = 20_999;
    const limiter = new FixedWindowLimiter({ limit: 10, clock: () => now });
    const before = await admitted(limiter, 'a', 10);
    now = 21_001;
    const after = await admitted(limiter, 'a', 10);
    expect(before + after).toBe(20);
  });

  it('defers denied work and releases it to workers without checking it again', async () => {
    const now = 30_000;
    const limiter = new FixedWindowLimiter({ limit: 2, clock: () => now });
    const ran: unknown[] = [];
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await limiter.check('a', { defer: { type: 'import', payload: { i } } }));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(2);
    expect(decisions.filter((d) => d.job)).toHaveLength(4);
    const workers = limiter.startWorkers({ handlers: { import: async (job) => ran.push(job.payload) }, concurrency: 2 });
    const deadline = Date.now() + 2000;
    while (ran.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await workers.close();
    // All four ran in the same window, on top of the two admitted: 6 units for a limit of 2.
    expect(ran).toEqual([{ i: 2 }, { i: 3 }, { i: 4 }, { i: 5 }]);
  });
});

describe('fairShares (weighted water-filling used for the "fair share" column)', () => {
  it('gives small demands what they ask and splits the rest by weight', () => {
    const shares = fairShares(100, [
      { name: 'flood', weight: 1, rate: 250 },
      { name: 'paying', weight: 3, rate: 200 },
      { name: 'light', weight: 1, rate: 5 },
    ]);
    expect(shares.get('light')).toBeCloseTo(5);
    expect(shares.get('flood')).toBeCloseTo(23.75);
    expect(shares.get('paying')).toBeCloseTo(71.25);
  });

  it('never hands out more than is asked when capacity is plentiful', () => {
    const shares = fairShares(100, [
      { name: 'a', weight: 1, rate: 10 },
      { name: 'b', weight: 2, rate: 20 },
    ]);
    expect(shares.get('a')).toBeCloseTo(10);
    expect(shares.get('b')).toBeCloseTo(20);
  });
});
