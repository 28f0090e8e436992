/**
 * The one conformance suite every store passes: describeStore(name, setup). All timing runs on an injected
 * clock, so results do not depend on machine speed. `make(clock, handles)` returns `handles` stores that
 * share state (several ioredis clients on Redis; one instance in memory).
 */
import { createLimiter, type Limiter, type LimiterOptions } from '../../src/limiter/limiter';
import type { Rule } from '../../src/limiter/rule-options';
import type { AdmitInput, Clock, Decision, LimiterSpec, LimiterStore, Store } from '../../src/types';
import { SPEC_DEFAULTS } from '../helpers/spec';

export interface StoreHarness {
  make(clock: Clock, handles?: number): Store[];
  close(): Promise<void>;
}

const T0 = 1_700_000_000_000;
let seq = 0;

export function spec(over: Partial<LimiterSpec> & { maxGroups?: number } = {}): LimiterSpec {
  seq += 1;
  return {
    ...SPEC_DEFAULTS,
    name: `conf-${process.pid}-${seq}`,
    limit: 100,
    windowMs: 1000,
    burst: 10,
    reserve: 2,
    idleMs: 2000,
    epochMs: 250,
    sustained: false,
    ...over,
  };
}

export class ManualClock {
  ms = T0;
  readonly now: Clock = () => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/**
 * Takes a fresh limiter past its cold start (its first epoch, when new ids register at once: docs/algorithm.md
 * §2.9) and leaves no group registered: the next new id goes on probation, and the level is back to 1.
 */
export async function pastColdStart(st: LimiterStore, clock: ManualClock, s: Pick<LimiterSpec, 'epochMs'>): Promise<void> {
  await st.admit({ group: 'cold-start', weight: 1, cost: 1 });
  await st.reset('cold-start');
  clock.advance(s.epochMs);
}

/** Max admitted units in any half-open window [x, x + windowMs) over (at, cost) pairs. */
export function maxInAnyWindow(admitted: Array<{ at: number; cost: number }>, windowMs: number): number {
  const a = [...admitted].sort((x, y) => x.at - y.at);
  let best = 0;
  let sum = 0;
  let lo = 0;
  for (let hi = 0; hi < a.length; hi++) {
    sum += a[hi]!.cost;
    while (a[lo]!.at <= a[hi]!.at - windowMs) {
      sum -= a[lo]!.cost;
      lo++;
    }
    best = Math.max(best, sum);
  }
  return best;
}

const input = (group: string, weight = 1, cost = 1): AdmitInput => ({ group, weight, cost });

/**
 * The set-up every conformance suite shares, called inside its describe(): the store harness is made before the
 * tests and closed after them; `bind` binds a limiter on the test clock (`handles` stores that share state, and
 * the first store itself), destroyed at the end. `harness()` is the harness (for suites that need its extras).
 */
export function useHarnessOf<H extends StoreHarness>(
  setup: () => Promise<H>,
): { harness: () => H; bind: (clock: ManualClock, s: LimiterSpec, handles?: number) => { stores: LimiterStore[]; store: Store } } {
  let h: H;
  const bound: LimiterStore[] = [];
  beforeAll(async () => {
    h = await setup();
  });
  afterAll(async () => {
    await Promise.all(bound.map((b) => b.destroy()));
    await h.close();
  });
  return {
    harness: () => h,
    bind: (clock, s, handles = 1) => {
      const made = h.make(clock.now, handles);
      const stores = made.map((st) => st.bind(s));
      bound.push(stores[0]!);
      return { stores, store: made[0]! };
    },
  };
}

/** useHarnessOf, for suites that need only the bound stores. */
export function useHarness(setup: () => Promise<StoreHarness>): (clock: ManualClock, s: LimiterSpec, handles?: number) => LimiterStore[] {
  const { bind } = useHarnessOf(setup);
  return (clock, s, handles) => bind(clock, s, handles).stores;
}

/**
 * useHarness for suites that go through the limiter (plans, jobs of a plan): the function returned makes `handles`
 * limiters of one name on the test clock (several processes on one Redis), destroyed and closed at the end.
 */
export function useLimiters(
  setup: () => Promise<StoreHarness>,
  prefix: string,
): (clock: ManualClock, options: Omit<LimiterOptions, 'store'>, handles?: number) => Limiter[] {
  let h: StoreHarness;
  let made = 0;
  const limiters: Limiter[] = [];
  beforeAll(async () => {
    h = await setup();
  });
  afterAll(async () => {
    for (const l of limiters) await l.destroy();
    await Promise.all(limiters.map((l) => l.close()));
    await h.close();
  });
  return (clock, options, handles = 1) => {
    const name = `${prefix}-${process.pid}-${++made}`;
    const out = h.make(clock.now, handles).map((store) => createLimiter({ logger: SILENT, ...options, store, name }));
    limiters.push(...out);
    return out;
  };
}

const SILENT = { warn: () => undefined, error: () => undefined };

/** A sliding-window rule (the rules the policy suites use most). */
export const slidingRule = (name: string, limit: number, windowMs = 1000): Rule => ({ name, limit, windowMs, algorithm: 'sliding-window' });

/** mulberry32: the same traffic on every run and store. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function describeStore(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`store conformance: ${name}`, () => {
    const bind = useHarness(setup);

    /** Every tick: each group in `perTick` sends that many requests (in parallel), then time moves on. */
    async function drive(
      stores: LimiterStore[],
      clock: ManualClock,
      ticks: number,
      tickMs: number,
      perTick: Record<string, number>,
      weights: Record<string, number> = {},
      cost = 1,
    ) {
      const admitted: Record<string, number> = {};
      const log: Array<{ at: number; cost: number }> = [];
      const colours = { green: 0, yellow: 0, red: 0 };
      let k = 0;
      for (let t = 0; t < ticks; t++) {
        const calls: Array<Promise<Decision>> = [];
        for (const [g, n] of Object.entries(perTick)) {
          for (let i = 0; i < n; i++) calls.push(stores[k++ % stores.length]!.admit(input(g, weights[g] ?? 1, cost)));
        }
        for (const d of await Promise.all(calls)) {
          colours[d.colour] += 1;
          if (d.allowed) {
            admitted[d.group] = (admitted[d.group] ?? 0) + cost;
            log.push({ at: d.at, cost });
          }
        }
        clock.advance(tickMs);
      }
      return { admitted, log, colours };
    }

    test('a first request is green and the decision is complete', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, spec());
      const d = await s!.admit(input('a'));
      expect(d).toEqual({
        allowed: true,
        group: 'a',
        limit: 100,
        guaranteed: 100,
        remaining: 9,
        retryAfterMs: 0,
        resetMs: 11,
        activeGroups: 1,
        colour: 'green',
        at: clock.ms,
      });
    });

    test('never more than limit in any window, under concurrency from several handles', async () => {
      const clock = new ManualClock();
      const s = spec({ limit: 50, windowMs: 1000, burst: 10, reserve: 2 });
      const stores = bind(clock, s, 4);
      const { log } = await drive(stores, clock, 600, 7, { a: 3, b: 2, c: 1, d: 1 });
      expect(maxInAnyWindow(log, 1000)).toBeLessThanOrEqual(50);
      // and it is not idle: strict capacity is (L − b + 1) per window
      expect(log.length).toBeGreaterThan(0.9 * 41 * 4.2);
    });

    test('two saturated groups share equally (±5%)', async () => {
      const clock = new ManualClock();
      const stores = bind(clock, spec());
      const { admitted } = await drive(stores, clock, 2000, 5, { a: 2, b: 2 });
      const ratio = admitted.a! / admitted.b!;
      expect(ratio).toBeGreaterThan(0.95);
      expect(ratio).toBeLessThan(1.05);
    });

    test('weights 3:1 split 3:1 (±5%)', async () => {
      const clock = new ManualClock();
      const stores = bind(clock, spec());
      const { admitted } = await drive(stores, clock, 2000, 5, { a: 2, b: 2 }, { a: 3, b: 1 });
      const ratio = admitted.a! / admitted.b!;
      expect(ratio).toBeGreaterThan(3 * 0.95);
      expect(ratio).toBeLessThan(3 * 1.05);
    });

    test('borrowing: a heavy group next to an almost idle one gets ≥ 90% of strict capacity', async () => {
      const clock = new ManualClock();
      const s = spec();
      const [st] = bind(clock, s);
      let heavy = 0;
      let light = 0;
      const seconds = 10;
      for (let t = 0; t < seconds * 200; t++) {
        for (let i = 0; i < 2; i++) if ((await st!.admit(input('heavy'))).allowed) heavy += 1;
        if (t % 200 === 0 && (await st!.admit(input('light'))).allowed) light += 1;
        clock.advance(5);
      }
      const strict = (s.limit - s.burst + 1) * seconds;
      expect(heavy + light).toBeLessThanOrEqual(s.limit * seconds);
      expect(heavy).toBeGreaterThanOrEqual(0.9 * (strict - light));
      expect(light).toBe(seconds);
    });

    test('idle groups expire and Σweights follows', async () => {
      const clock = new ManualClock();
      const s = spec({ idleMs: 1000 });
      const [st] = bind(clock, s);
      await st!.admit(input('a', 1));
      const b = await st!.admit(input('b', 3));
      expect(b.activeGroups).toBe(2);
      expect(b.guaranteed).toBe(75);
      for (let t = 0; t < 30; t++) {
        clock.advance(100);
        await st!.admit(input('a', 1));
      }
      const a = await st!.admit(input('a', 1));
      expect(a.activeGroups).toBe(1);
      expect(a.guaranteed).toBe(100);
    });

    test('idle groups are trimmed in pages of 100, one page per call', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, spec({ idleMs: 1000 }));
      await Promise.all(Array.from({ length: 250 }, (_, i) => st!.admit(input(`idle-${i}`))));
      clock.advance(1500);
      const active: number[] = [];
      for (let i = 0; i < 4; i++) active.push((await st!.admit(input('live'))).activeGroups);
      expect(active).toEqual([151, 51, 1, 1]);
    });

    test('retrying at retryAfterMs succeeds', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, spec({ limit: 20, burst: 5, reserve: 1 }));
      for (let round = 0; round < 20; round++) {
        let d = await st!.admit(input('a'));
        while (d.allowed) d = await st!.admit(input('a'));
        expect(d.reason).toBe('limit');
        expect(d.retryAfterMs).toBeGreaterThan(0);
        clock.advance(d.retryAfterMs);
        expect((await st!.admit(input('a'))).allowed).toBe(true);
      }
    });

    test('concurrent callers of one group get staggered retry slots', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, spec({ limit: 20, burst: 5, reserve: 1 }));
      let d = await st!.admit(input('a'));
      while (d.allowed) d = await st!.admit(input('a'));
      const next = await st!.admit(input('a'));
      expect(next.retryAfterMs).toBeGreaterThan(d.retryAfterMs);
    });

    test('cost > 1 takes that many units', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, spec({ limit: 100, burst: 10, reserve: 2 }));
      const a = await st!.admit(input('a', 1, 4));
      expect(a.allowed).toBe(true);
      expect(a.remaining).toBe(6);
      const b = await st!.admit(input('a', 1, 4));
      expect(b.remaining).toBe(2);
      const c = await st!.admit(input('a', 1, 4));
      expect(c.allowed).toBe(false);
    });

    test('colours: green within the share, yellow when borrowing, red when out', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, spec({ limit: 100, burst: 20, reserve: 2 }));
      await st!.admit(input('b')); // a second active group halves a's guarantee: green burst 10
      const seen: string[] = [];
      for (let i = 0; i < 19; i++) seen.push((await st!.admit(input('a'))).colour);
      expect(seen.slice(0, 10).every((c) => c === 'green')).toBe(true);
      expect(seen).toContain('yellow');
      expect(seen[seen.length - 1]).toBe('red');
    });

    test('the reserve: yellow cannot take the last tokens, green can', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, spec({ limit: 100, burst: 20, reserve: 5 }));
      await st!.admit(input('b')); // b: 1 token used, 19 left
      let d = await st!.admit(input('a'));
      let a = 0;
      while (d.allowed) {
        a += 1;
        d = await st!.admit(input('a'));
      }
      // the reserve is max(5, ⌊20/2⌋) = 10; a's arrivals are within its share's 40-unit meter, so its yellow
      // (amber) stops at a quarter of it: 19 − 2.5, i.e. 16 units (docs/algorithm.md §2.4)
      expect(a).toBe(16);
      const b = await st!.admit(input('b'));
      expect(b.allowed).toBe(true);
      expect(b.colour).toBe('green');
    });

    test('maxGroups: new groups beyond it share one overflow group', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, { ...spec(), maxGroups: 3 });
      for (const g of ['a', 'b', 'c']) expect((await st!.admit(input(g))).group).toBe(g);
      const x = await st!.admit(input('x', 50));
      const y = await st!.admit(input('y', 50));
      expect(x.group).toBe('*overflow*');
      expect(y.activeGroups).toBe(4);
      expect(y.guaranteed).toBe(25); // the overflow group has weight 1, whatever was asked
      expect((await st!.admit(input('a'))).group).toBe('a');
    });

    test('cold start: the first epoch of a fresh limiter registers new ids at once (caps at the guarantees); later new ids go on probation', async () => {
      const clock = new ManualClock();
      const s = { ...spec(), probationMs: 500 }; // epochMs 250
      const [st] = bind(clock, s);
      expect(await st!.admit(input('a'))).toMatchObject({ group: 'a', activeGroups: 1, guaranteed: 100 });
      // b's own weight from its first request; its cap is its guarantee until the first epoch step
      expect(await st!.admit(input('b', 3))).toMatchObject({ group: 'b', activeGroups: 2, guaranteed: 75, limit: 75 });
      clock.advance(249);
      expect(await st!.admit(input('c'))).toMatchObject({ activeGroups: 3, guaranteed: 20 }); // 1 of Σw 5
      clock.advance(1);
      // the first epoch is over: d is a newcomer ('*new*' joins with weight 1: 1 of Σw 6)
      expect(await st!.admit(input('d'))).toMatchObject({ group: 'd', activeGroups: 4, guaranteed: 16 });
      expect(await st!.admit(input('a'))).toMatchObject({ activeGroups: 4, guaranteed: 16 });
    });

    test('cold start: the first epoch lasts at most a second whatever epochMs is; then the level climbs from the guarantees', async () => {
      const clock = new ManualClock();
      const s = { ...spec({ limit: 1000, windowMs: 10_000, burst: 50 }), epochMs: 2500, probationMs: 1000 };
      const [st] = bind(clock, s);
      await st!.admit(input('a'));
      expect(await st!.admit(input('b'))).toMatchObject({ group: 'b', activeGroups: 2, limit: 500 }); // capped at its guarantee
      clock.advance(999);
      expect(await st!.admit(input('b'))).toMatchObject({ activeGroups: 2, limit: 500 });
      clock.advance(1);
      // the first step (one second, 95 tokens made, 3 asked for) lifts the level to 1; c is a newcomer
      expect(await st!.admit(input('c'))).toMatchObject({ group: 'c', activeGroups: 3 });
      expect(await st!.admit(input('b'))).toMatchObject({ activeGroups: 3, limit: 1000 });
    });

    test('cold start: the first epoch registers no more new ids than the graduation budget holds (100); the others are newcomers', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, { ...spec({ limit: 100_000, burst: 5000, reserve: 1 }), probationMs: 100 });
      let active = 0;
      for (let i = 0; i < 150; i++) active = (await st!.admit(input(`id-${i}`))).activeGroups;
      expect(active).toBe(101); // 100 registered and '*new*'
    });

    test('probation: a new id is decided as one shared group until it comes back probationMs after its first request', async () => {
      const clock = new ManualClock();
      const s = { ...spec(), probationMs: 500 };
      const [st] = bind(clock, s);
      await pastColdStart(st!, clock, s);
      const a = await st!.admit(input('a'));
      expect(a).toMatchObject({ group: 'a', activeGroups: 1, guaranteed: 100 }); // the caller's name; '*new*' decided
      expect(await st!.admit(input('b', 3))).toMatchObject({ group: 'b', activeGroups: 1, guaranteed: 100 }); // weight 1 there
      clock.advance(499);
      expect(await st!.admit(input('a'))).toMatchObject({ activeGroups: 1 });
      clock.advance(1);
      expect(await st!.admit(input('a'))).toMatchObject({ group: 'a', activeGroups: 2, guaranteed: 50 }); // registered
      expect(await st!.admit(input('b', 3))).toMatchObject({ group: 'b', activeGroups: 3, guaranteed: 60 }); // 3 of Σw 5
    });

    test('probation: a flood of one-request ids never registers; at most maxGroups first sightings are kept, oldest dropped', async () => {
      const clock = new ManualClock();
      const s = { ...spec({ limit: 1000, burst: 50, reserve: 10 }), maxGroups: 10, probationMs: 100 };
      const [st] = bind(clock, s);
      await pastColdStart(st!, clock, s);
      await st!.admit(input('tenant'));
      clock.advance(100);
      expect(await st!.admit(input('tenant'))).toMatchObject({ activeGroups: 2, guaranteed: 500 });
      await st!.admit(input('latecomer'));
      for (let i = 0; i < 200; i++) {
        await st!.admit(input(`flood-${i}`));
        clock.advance(1);
      }
      // The flood shares '*new*': the tenant keeps half the limit guaranteed, and nobody else was registered.
      expect(await st!.admit(input('tenant'))).toMatchObject({ activeGroups: 2, guaranteed: 500 });
      // The latecomer's first sighting was pushed out by the flood's: it starts its probation again…
      expect(await st!.admit(input('latecomer'))).toMatchObject({ activeGroups: 2 });
      clock.advance(100);
      // …and is registered when it comes back after probationMs.
      expect(await st!.admit(input('latecomer'))).toMatchObject({ activeGroups: 3 });
    });

    test('probation: the shared groups take none of the maxGroups places', async () => {
      const clock = new ManualClock();
      const s = { ...spec(), maxGroups: 1, probationMs: 10 };
      const [st] = bind(clock, s);
      await pastColdStart(st!, clock, s);
      await st!.admit(input('a'));
      clock.advance(10);
      expect(await st!.admit(input('a'))).toMatchObject({ group: 'a', activeGroups: 2 }); // '*new*' and 'a'
      await st!.admit(input('b'));
      clock.advance(10);
      expect(await st!.admit(input('b'))).toMatchObject({ group: '*overflow*', activeGroups: 3 });
    });

    test('a tier change applies on the next call', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, spec());
      await st!.admit(input('a', 1));
      expect((await st!.admit(input('b', 1))).guaranteed).toBe(50);
      expect((await st!.admit(input('b', 3))).guaranteed).toBe(75);
    });

    test('a clock step backwards does not refill twice', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, spec({ limit: 10, burst: 5, reserve: 1 }));
      let n = 0;
      while ((await st!.admit(input('a'))).allowed) n += 1;
      clock.advance(-5000);
      expect((await st!.admit(input('a'))).allowed).toBe(false);
      expect(n).toBe(5);
    });

    test('destroy forgets the limiter', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, spec({ limit: 10, burst: 2, reserve: 1 }));
      while ((await st!.admit(input('a'))).allowed);
      await st!.destroy();
      expect((await st!.admit(input('a'))).allowed).toBe(true);
    });
  });
}
