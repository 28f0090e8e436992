import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { StoreError } from '../../src/errors';
import { EPISODE_QUIET_MS, PROBE_MIN_MS } from '../../src/limiter/outage/breaker';
import { createOutageGuard } from '../../src/limiter/outage/outage';
import { isDegraded, localSpec } from '../../src/limiter/outage/outage-policy';
import { KnownOverrides } from '../../src/limiter/outage/known-overrides';
import type { Decision } from '../../src/types';
import { deadlineQueue, withTimeout } from '../../src/util/store-call';
import type { StoreErrorPolicy } from '../../src/limiter/options';
import { realScheduler, withScheduler } from '../../src/util/scheduler';
import { ManualScheduler, settle } from '../helpers/manual-scheduler';
import { FaultStore } from './fault-store';
import { MemoryStore } from '../../src/memory/memory-store';
import { SPEC_DEFAULTS } from '../helpers/spec';

/** The limiters' timeouts and probes run on this clock: time moves only when a test advances it. */
let clock: ManualScheduler;
beforeEach(() => {
  clock = new ManualScheduler();
});

/** Whether `promise` has settled yet (after letting promise chains run). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => void (done = true),
    () => void (done = true),
  );
  await settle();
  return done;
}

let seq = 0;
function make(policy: StoreErrorPolicy, extra: Record<string, unknown> = {}) {
  const store = new FaultStore();
  const lines: string[] = [];
  const limiter = createLimiter(
    withScheduler(
      {
        store,
        name: `outage-${++seq}`,
        limit: 10,
        tuning: { burst: 10 },
        windowMs: 1000,
        onStoreError: policy,
        timeoutMs: 40,
        logger: {
          warn: (m: string) => {
            lines.push(m);
          },
        },
        ...extra,
      },
      clock,
    ),
  );
  return { store, limiter, lines };
}

const nextEvent = (limiter: Limiter, event: 'degraded' | 'recovered'): Promise<unknown> =>
  new Promise((resolve) => {
    const listener = (arg: unknown): void => {
      limiter.off(event, listener);
      resolve(arg);
    };
    limiter.on(event, listener);
  });

describe('withTimeout', () => {
  test('rejects with StoreError ERR_BL_STORE_TIMEOUT when the promise never settles, after timeoutMs', async () => {
    const timedOut = withTimeout(new Promise(() => {}), 20, clock);
    await clock.advance(19);
    expect(await settled(timedOut)).toBe(false);
    await clock.advance(1);
    await expect(timedOut).rejects.toMatchObject({ code: 'ERR_BL_STORE_TIMEOUT', constructor: StoreError });
  });
  test('passes values and errors through', async () => {
    await expect(withTimeout(Promise.resolve(7), 1000)).resolves.toBe(7);
    const boom = new Error('boom');
    await expect(withTimeout(Promise.reject(boom), 1000)).rejects.toBe(boom);
  });
});

describe('deadlineQueue', () => {
  test('each call times out timeoutMs after it started, on one timer; answered calls are not touched', async () => {
    const within = deadlineQueue(20, clock);
    const first = within(new Promise(() => {}));
    await clock.advance(5);
    let answer!: (value: number) => void;
    const answered = within(new Promise<number>((resolve) => (answer = resolve)));
    await clock.advance(5);
    const third = within(new Promise(() => {}));
    expect(clock.pending).toBe(1);
    answer(7);
    await expect(answered).resolves.toBe(7);
    await clock.advance(9);
    expect(await settled(first)).toBe(false);
    await clock.advance(1);
    await expect(first).rejects.toMatchObject({ code: 'ERR_BL_STORE_TIMEOUT', constructor: StoreError });
    await clock.advance(9);
    expect(await settled(third)).toBe(false);
    await clock.advance(1);
    await expect(third).rejects.toMatchObject({ code: 'ERR_BL_STORE_TIMEOUT' });
  });
  test('seen gets every value the store answers, in time or late, and no error', async () => {
    const within = deadlineQueue(20, clock);
    const seen: number[] = [];
    let late!: (value: number) => void;
    const timedOut = expect(within(new Promise<number>((resolve) => (late = resolve)), undefined, (v) => void seen.push(v))).rejects.toMatchObject({
      code: 'ERR_BL_STORE_TIMEOUT',
    });
    await expect(within(Promise.resolve(3), undefined, (v) => void seen.push(v))).resolves.toBe(3);
    await expect(within(Promise.reject(new Error('x')), undefined, (v) => void seen.push(v as number))).rejects.toThrow('x');
    await clock.advance(20);
    await timedOut;
    late(9);
    await Promise.resolve();
    await Promise.resolve();
    expect(seen).toEqual([3, 9]);
  });
  test('an answer after the time limit is ignored; values and errors pass through', async () => {
    const within = deadlineQueue(20, clock);
    let late!: (value: number) => void;
    const timedOut = expect(within(new Promise<number>((resolve) => (late = resolve)))).rejects.toMatchObject({ code: 'ERR_BL_STORE_TIMEOUT' });
    await clock.advance(20);
    late(1);
    await timedOut;
    await expect(within(Promise.resolve(7))).resolves.toBe(7);
    const boom = new Error('boom');
    await expect(within(Promise.reject(boom))).rejects.toBe(boom);
  });
  test('recover answers a failure and a timeout in their place; a value passes it by; a throwing recover rejects', async () => {
    const within = deadlineQueue(20, clock);
    const seen: unknown[] = [];
    const recover = (error: unknown): number => (seen.push(error), -1);
    await expect(within(Promise.resolve(7), recover)).resolves.toBe(7);
    const boom = new Error('boom');
    await expect(within(Promise.reject(boom), recover)).resolves.toBe(-1);
    const hanging = within(new Promise<number>(() => {}), recover);
    await clock.advance(20);
    await expect(hanging).resolves.toBe(-1);
    expect(seen).toEqual([boom, expect.objectContaining({ code: 'ERR_BL_STORE_TIMEOUT' })]);
    const worse = new Error('worse');
    const rethrow = (): number => {
      throw worse;
    };
    await expect(within(Promise.reject(boom), rethrow)).rejects.toBe(worse);
  });
});

describe("onStoreError 'allow'", () => {
  test('a throwing store lets requests through, logs once, recovers when a probe answers', async () => {
    const { store, limiter, lines } = make('allow');
    store.mode = 'throw';
    const degraded = nextEvent(limiter, 'degraded');
    for (let i = 0; i < 5; i++) {
      const d = await limiter.check('a');
      expect(d.allowed).toBe(true);
      expect(isDegraded(d)).toBe(true);
    }
    await expect(degraded).resolves.toBeInstanceOf(StoreError);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^WRN_BL_STORE_FAIL_OPEN.*ECONNREFUSED/);
    // The breaker is open: after the first failure the store is not asked again by checks.
    expect(store.calls).toHaveLength(1);
    const recovered = nextEvent(limiter, 'recovered');
    store.mode = 'ok';
    // The first probe, PROBE_MIN_MS after the failure, answers.
    await clock.advance(100);
    await expect(recovered).resolves.toEqual({ downMs: 100 });
    const d = await limiter.check('a');
    expect(isDegraded(d)).toBe(false);
    expect(d.remaining).toBe(9);
    expect(lines[1]).toMatch(/^WRN_BL_STORE_RECOVERED/);
    // A failure soon after the recovery continues the episode: no warning, and none when it recovers again.
    store.mode = 'throw';
    await limiter.check('a');
    store.mode = 'ok';
    await clock.advance(PROBE_MIN_MS);
    expect((await limiter.check('a')).allowed).toBe(true);
    expect(lines).toHaveLength(2);
    // Once the store has answered for EPISODE_QUIET_MS, a new outage is logged again, once.
    await clock.advance(EPISODE_QUIET_MS);
    store.mode = 'throw';
    await limiter.check('a');
    await limiter.check('a');
    expect(lines.filter((l) => l.startsWith('WRN_BL_STORE_FAIL_OPEN'))).toHaveLength(2);
    await limiter.close();
  });
});

describe("onStoreError 'deny'", () => {
  test('a hanging store times out after timeoutMs into a store-error denial', async () => {
    const { store, limiter, lines } = make('deny');
    store.mode = 'hang';
    const check = limiter.check('a');
    await clock.advance(39);
    expect(await settled(check)).toBe(false);
    await clock.advance(1);
    const d = await check;
    expect(d).toMatchObject({ allowed: false, reason: 'store-error', colour: 'red' });
    expect(d.retryAfterMs).toBeGreaterThan(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^WRN_BL_STORE_FAIL_CLOSED.*did not answer within 40 ms/);
    await limiter.close();
  });

  test('the breaker: while open, checks never wait on the store; a background probe asks it instead', async () => {
    const { store, limiter } = make('deny');
    store.mode = 'hang';
    const first = limiter.check('a');
    await clock.advance(40); // the first check times out: the breaker opens
    await first;
    const before = store.calls.length;
    const decisions = Promise.all(Array.from({ length: 20 }, () => limiter.check('a')));
    // Answered with no time passing: none of them waits timeoutMs.
    expect(await settled(decisions)).toBe(true);
    expect((await decisions).every((d) => d.reason === 'store-error')).toBe(true);
    expect(store.calls.length).toBe(before);
    // Probes run in the background, 100 ms after the failure, then doubling, each bounded by timeoutMs (40):
    // at 140, 380 (140 + 40 + 200) and 820 (380 + 40 + 400) ms.
    const probesAt = async (ms: number): Promise<number> => (await clock.advance(ms - (clock.now() - t0)), store.probes);
    const t0 = clock.now() - 40;
    expect(await probesAt(139)).toBe(0);
    expect(await probesAt(140)).toBe(1);
    expect(await probesAt(379)).toBe(1);
    expect(await probesAt(380)).toBe(2);
    expect(await probesAt(819)).toBe(2);
    expect(await probesAt(820)).toBe(3);
    await limiter.close();
  });

  test('close() stops the probe; a check made after it starts probing again', async () => {
    const { store, limiter } = make('deny');
    store.mode = 'throw';
    await limiter.check('a');
    await limiter.close();
    await clock.advance(300);
    expect(store.probes).toBe(0);
    store.mode = 'ok';
    const recovered = nextEvent(limiter, 'recovered');
    expect((await limiter.check('a')).reason).toBe('store-error');
    await clock.advance(100);
    expect(store.probes).toBe(1);
    await recovered;
    expect((await limiter.check('a')).allowed).toBe(true);
    await limiter.close();
  });
});

describe("onStoreError 'local'", () => {
  test('the in-process fallback admits limit / instances, shared fairly, then denies with a retry time', async () => {
    const { store, limiter, lines } = make('local', { instances: 2 });
    store.mode = 'throw';
    // The failure that opens the breaker; the fallback admits nothing for timeoutMs + windowMs (one limit with the store).
    expect(await limiter.check('g0')).toMatchObject({ allowed: false, reason: 'store-error' });
    await clock.advance(1040);
    const decisions = [];
    for (let i = 0; i < 9; i++) decisions.push(await limiter.check(`g${i % 3}`));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
    // Each of the three groups got some of the five.
    for (const g of ['g0', 'g1', 'g2']) expect(decisions.some((d) => d.group === g && d.allowed)).toBe(true);
    const denied = decisions.find((d) => !d.allowed)!;
    expect(denied).toMatchObject({ reason: 'limit' });
    expect(denied.retryAfterMs).toBeGreaterThan(0);
    expect(denied.retryAfterMs).toBeLessThanOrEqual(1000);
    expect(isDegraded(decisions[0]!)).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^WRN_BL_STORE_FAIL_LOCAL/);
    await limiter.close();
  });

  test('cost counts against the local budget', async () => {
    const { store, limiter } = make('local');
    store.mode = 'throw';
    await limiter.check('a');
    await clock.advance(1040);
    expect((await limiter.check('a', { cost: 8 })).allowed).toBe(true);
    expect((await limiter.check('a', { cost: 3 })).allowed).toBe(false);
    expect((await limiter.check('a', { cost: 2 })).allowed).toBe(true);
    await limiter.close();
  });

  test('a store that answers again takes over from the local limiter', async () => {
    const { store, limiter } = make('local');
    store.mode = 'throw';
    for (let i = 0; i < 12; i++) await limiter.check('a');
    const recovered = nextEvent(limiter, 'recovered');
    store.mode = 'ok';
    await clock.advance(100);
    await recovered;
    const d = await limiter.check('a');
    expect(d).toMatchObject({ allowed: true, remaining: 9 });
    await limiter.close();
  });

  test.each([
    [100, 1000, 1],
    [100, 1000, 3],
    [20, 200, 2],
  ])(
    'never admits more than its share in any sliding window (limit %i per %i ms, %i instances; injected clock)',
    async (limit, windowMs, instances) => {
      let now = 1_800_000_000_000;
      const spec = {
        ...SPEC_DEFAULTS,
        name: 'local-window',
        limit,
        windowMs,
        burst: limit,
        reserve: Math.ceil(limit / 5),
        idleMs: 10_000,
        epochMs: 250,
        sustained: false,
      };
      const guard = createOutageGuard({ admit: () => Promise.reject(new Error('down')) } as never, {
        policy: 'local',
        timeoutMs: 50,
        instances,
        spec,
        logger: { warn: () => undefined },
        probe: () => new Promise(() => {}),
        scheduler: { ...realScheduler, now: () => now },
      });
      const share = Math.floor(limit / instances);
      const admittedAt: number[] = [];
      const byGroup = new Map<string, number>();
      // Three tenants, one of them flooding, for 20 windows; the clock moves 1–13 ms between rounds.
      for (let round = 0; now < 1_800_000_000_000 + 20 * windowMs; round++) {
        const groups = ['flood', 'flood', 'flood', 'flood', 'a', round % 3 === 0 ? 'b' : 'flood'];
        for (const group of groups) {
          const d = await guard.admit({ group, weight: 1, cost: 1 });
          if (d.allowed) {
            admittedAt.push(now);
            byGroup.set(group, (byGroup.get(group) ?? 0) + 1);
          }
        }
        now += 1 + ((round * 7) % 13);
      }
      guard.close();
      let most = 0;
      for (let i = 0, j = 0; i < admittedAt.length; i++) {
        while (admittedAt[i]! - admittedAt[j]! >= windowMs) j++;
        most = Math.max(most, i - j + 1);
      }
      expect(most).toBeLessThanOrEqual(share);
      expect(most).toBeGreaterThanOrEqual(share * 0.8);
      // Fair: the light tenants are not starved by the flood.
      expect(byGroup.get('a')).toBeGreaterThan(admittedAt.length / 5);
    },
  );

  test('the fallback decides under the overrides this process knows: a blocked tenant stays blocked, a weight holds', async () => {
    const tuning = { burst: 10, probationMs: 0 };
    const { store, limiter } = make('local', { tuning });
    // another process of the limiter (the same name on the same store), where an operator works
    const admin = createLimiter(withScheduler({ store, name: limiter.name, limit: 10, tuning, windowMs: 1000 }, clock));
    await admin.setOverride('abuser', { blocked: true }, { reason: 'abuse' });
    await admin.setOverride('flip', { blocked: true });
    await limiter.setOverride('partner', { weight: 4 });
    await limiter.setOverride('brief', { blocked: true }, { ttlMs: 1500 });
    // this process learns another's blocks from its store decisions, and that one ended
    expect((await limiter.check('abuser')).policy).toBe('blocked');
    expect((await limiter.check('flip')).policy).toBe('blocked');
    await admin.deleteOverride('flip');
    expect((await limiter.check('flip')).allowed).toBe(true);

    store.mode = 'throw';
    expect(await limiter.check('other')).toMatchObject({ allowed: false, reason: 'store-error' });
    await clock.advance(1040);
    expect(store.calls.at(-1)?.group).toBe('other'); // the breaker is open: the fallback answers from here on
    expect(await limiter.check('abuser')).toMatchObject({ allowed: false, reason: 'blocked', policy: 'blocked' });
    expect(await limiter.check('brief')).toMatchObject({ allowed: false, policy: 'blocked' });
    expect((await limiter.check('flip')).allowed).toBe(true);
    // flip and other weigh 1 each, partner 4 (its override): ⌊10 · 1/2⌋ for other, then ⌊10 · 4/6⌋ for partner
    const other = await limiter.check('other');
    const partner = await limiter.check('partner');
    expect([other.guaranteed, partner.guaranteed]).toEqual([5, 6]);
    // a ttl runs out on the fallback too
    await clock.advance(500);
    expect((await limiter.check('brief')).allowed).toBe(true);
    expect((await limiter.check('abuser')).policy).toBe('blocked');
    await admin.close();
    await limiter.close();
  });

  test("the known overrides are bounded by tuning.maxOverrides; 'allow' and 'deny' keep none", async () => {
    const known = new KnownOverrides(2, 1000);
    const at = 1_800_000_000_000;
    const blocked = (group: string, retryAfterMs: number) => ({ group, allowed: false, policy: 'blocked', retryAfterMs, at }) as Decision;
    known.decided(blocked('a', 1000)); // one window: a block without ttl
    known.decided(blocked('b', 5000)); // a block with 5 s left
    expect(known.inForce(at).map((o) => [o.group, o.ttlMs])).toEqual([
      ['a', 0],
      ['b', 5000],
    ]);
    known.decided(blocked('c', 1000));
    expect(known.inForce(at).map((o) => o.group)).toEqual(['b', 'c']); // the oldest news went
    expect(known.inForce(at + 5000).map((o) => o.group)).toEqual(['c']);
    known.decided({ group: 'c', allowed: true, at } as Decision);
    expect(known.size).toBe(1);

    for (const policy of ['allow', 'deny'] as const) {
      const { store, limiter } = make(policy);
      await limiter.setOverride('abuser', { blocked: true });
      store.mode = 'throw';
      await limiter.check('x');
      await clock.advance(1040);
      expect((await limiter.check('abuser')).reason).toBe(policy === 'allow' ? undefined : 'store-error');
      await limiter.close();
    }
  });

  test('localSpec scales limit, burst and reserve by the number of instances', () => {
    const spec = { ...SPEC_DEFAULTS, name: 's', limit: 100, windowMs: 1000, burst: 10, reserve: 2, idleMs: 10_000, epochMs: 250, sustained: false };
    expect(localSpec(spec, 1)).toBe(spec);
    expect(localSpec(spec, 4)).toMatchObject({ limit: 25, burst: 3, reserve: 1 });
    expect(localSpec({ ...spec, limit: 3, burst: 2, reserve: 1 }, 5)).toMatchObject({ limit: 1, burst: 1, reserve: 0 });
  });
});

describe('observation and health', () => {
  test('an observer sees each decision with who answered, and each store call; unobserved, nothing is called', async () => {
    const { store, limiter } = make('local');
    const seen: string[] = [];
    const calls: boolean[] = [];
    const stop = limiter.observe({
      decision: (d, fallback) => seen.push(`${d.allowed ? 'allowed' : 'denied'}:${fallback ?? 'store'}`),
      storeCall: (ms, failed) => {
        expect(ms).toBeGreaterThanOrEqual(0);
        calls.push(failed);
      },
    });
    await limiter.check('a');
    store.mode = 'throw';
    await limiter.check('a');
    await clock.advance(1040);
    await limiter.check('a');
    expect(seen).toEqual(['allowed:store', 'denied:local', 'allowed:local']);
    expect(calls).toEqual([false, true]);
    stop();
    await limiter.check('a');
    expect(seen).toHaveLength(3);
    await limiter.close();
  });

  test("health(): 'up' with the store answering, 'down' when it fails, 'degraded' while the breaker is open", async () => {
    const { store, limiter } = make('allow');
    expect(await limiter.health()).toMatchObject({ status: 'up', latencyMs: expect.any(Number) });
    expect((await limiter.health()).lastError).toBeUndefined();
    store.mode = 'hang';
    const health = limiter.health();
    await clock.advance(40);
    expect(await health).toMatchObject({ status: 'down', latencyMs: expect.any(Number), lastError: expect.stringMatching(/within 40 ms/) });
    store.mode = 'throw';
    await limiter.check('a');
    store.mode = 'ok';
    // The store answers but the breaker has not closed yet: its first probe is PROBE_MIN_MS away.
    expect(await limiter.health()).toMatchObject({ status: 'degraded', lastError: expect.stringMatching(/ECONNREFUSED/) });
    await clock.advance(PROBE_MIN_MS);
    expect((await limiter.health()).status).toBe('up');
    await limiter.close();
  });
});

describe('the MemoryStore, asked synchronously', () => {
  // The outage guard calls the embedded store's admission without a promise (src/util/admit-now.ts): a failure
  // there must still reach the policy, as a rejected store call does, and never escape check() as a throw.
  function broken(policy: StoreErrorPolicy) {
    let failing = false;
    const store = new MemoryStore({
      clock: () => {
        if (failing) throw new Error('clock broke');
        return 1_800_000_000_000;
      },
    });
    // make()'s limiter, on this store instead of a FaultStore
    const { limiter, lines } = make(policy, { store });
    return { limiter, lines, fail: () => void (failing = true) };
  }

  test("a throwing admission is answered by 'allow' and 'deny', logged once, never thrown from check()", async () => {
    for (const [policy, allowed] of [
      ['allow', true],
      ['deny', false],
    ] as const) {
      const { limiter, lines, fail } = broken(policy);
      expect(isDegraded(await limiter.check('a'))).toBe(false);
      fail();
      let answer: Promise<Decision> | undefined;
      expect(() => {
        answer = limiter.check('a');
      }).not.toThrow();
      const d = await answer!;
      expect(d.allowed).toBe(allowed);
      expect(isDegraded(d)).toBe(true);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/clock broke/);
      limiter.close();
    }
  });
});
