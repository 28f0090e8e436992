/**
 * Config drift (lua/includes/config-drift.lua, lua/config-check.lua; src/core/config-drift.ts): two limiters of
 * one name with other options on one store (two processes on one Redis; two bindings of one MemoryStore) each
 * warn WRN_BL_CONFIG_MISMATCH once, naming what differs, and health() reports it while the checks see it;
 * limiters that agree never do. On the store's injected clock.
 */
import { createLimiter, type Limiter, type LimiterOptions } from '../../src/limiter/limiter';
import { CF_LIVE_MS, CF_TAKE_MS } from '../../src/core/constants.generated';
import { MISMATCH_HOLD_MS, RETRY_MS } from '../../src/core/config-watch';
import { ManualClock, type StoreHarness } from './store-suite';

type Options = Omit<LimiterOptions, 'store' | 'name' | 'logger'>;

class Warnings {
  readonly lines: string[] = [];
  readonly logger = { warn: (m: string) => void this.lines.push(m), error: () => undefined };
  get drift(): string[] {
    return this.lines.filter((l) => l.startsWith('WRN_BL_CONFIG_MISMATCH'));
  }
}

export function describeConfigDriftCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`${name}: config drift`, () => {
    let h: StoreHarness;
    const made: Limiter[] = [];
    let seq = 0;
    beforeAll(async () => {
      h = await setup();
    });
    afterAll(async () => {
      for (const l of made) await l.destroy();
      await Promise.all(made.map((l) => l.close()));
      await h.close();
    });

    /** One limiter name, one option set per process, on one store (its handles share the state). */
    const processes = (clock: ManualClock, ...options: Options[]): Array<{ limiter: Limiter; warnings: Warnings }> => {
      const limiterName = `drift-${process.pid}-${++seq}`;
      const stores = h.make(clock.now, options.length);
      return options.map((o, i) => {
        const warnings = new Warnings();
        const limiter = createLimiter({ ...o, store: stores[i]!, name: limiterName, logger: warnings.logger });
        made.push(limiter);
        return { limiter, warnings };
      });
    };

    /** Both check once a second for `ms` (a health() after each settles the naming a check started). */
    const run = async (clock: ManualClock, ms: number, ...limiters: Limiter[]): Promise<void> => {
      for (let t = 0; t < ms; t += 1000) {
        for (const l of limiters) {
          await l.check('tenant');
          await l.health();
        }
        clock.advance(1000);
      }
    };

    test('another limit: each process warns once, naming it; health() reports it', async () => {
      const clock = new ManualClock();
      const start = clock.ms;
      const [a, b] = processes(clock, { limit: 100, windowMs: 1000 }, { limit: 200, windowMs: 1000 });
      await a!.limiter.check('tenant');
      // b's first check sees a's fingerprint; a has not described its options yet
      await b!.limiter.check('tenant');
      const early = await b!.limiter.health();
      expect(early.configMismatch).toEqual({ options: [], since: start });
      expect(b!.warnings.drift).toHaveLength(0);
      // a's next check sees b's and names what differs; b's, a few seconds later, names it too
      await run(clock, RETRY_MS + 2000, a!.limiter, b!.limiter);
      expect(a!.warnings.drift).toHaveLength(1);
      expect(a!.warnings.drift[0]).toContain('limit: this process 100, another 200');
      expect(b!.warnings.drift).toHaveLength(1);
      expect(b!.warnings.drift[0]).toContain('limit: this process 200, another 100');
      const seenByB = await b!.limiter.health();
      expect(seenByB.configMismatch?.options).toContain('limit: this process 200, another 100');
      expect(seenByB.configMismatch?.since).toBe(start);
      expect(seenByB.status).toBe('up');
      expect((await a!.limiter.health()).configMismatch?.options).toContain('limit: this process 100, another 200');
      // once per limiter and process, however long it lasts; health() keeps reporting it meanwhile
      await run(clock, 3 * CF_LIVE_MS, a!.limiter, b!.limiter);
      expect(a!.warnings.drift).toHaveLength(1);
      expect(b!.warnings.drift).toHaveLength(1);
      expect((await a!.limiter.health()).configMismatch).toBeDefined();
      expect((await b!.limiter.health()).configMismatch).toBeDefined();
    });

    test('rules, plans and classes that differ are named', async () => {
      const clock = new ManualClock();
      const base = { limit: 100, windowMs: 1000 };
      const [a, b] = processes(
        clock,
        { ...base, rules: [{ name: 'perTenant', limit: 10, windowMs: 1000 }], plans: { pro: { weight: 2 } } },
        { ...base, rules: [{ name: 'perTenant', limit: 20, windowMs: 1000 }], plans: { pro: { weight: 3 } }, classes: { critical: { share: 0.2 } } },
      );
      await run(clock, RETRY_MS + 2000, a!.limiter, b!.limiter);
      const options = (await b!.limiter.health()).configMismatch?.options ?? [];
      expect(options).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^rules\.perTenant: this process 20 per 1000 ms.*, another 10 per 1000 ms/),
          'plans.pro.weight: this process 3, another 2',
          expect.stringMatching(/^classes\.critical: this process 0\.2, another none$/),
        ]),
      );
      expect(options.some((o) => o.startsWith('limit:'))).toBe(false);
      expect(b!.warnings.drift[0]).toContain('plans.pro.weight: this process 3, another 2');
      expect(a!.warnings.drift[0]).toContain('plans.pro.weight: this process 2, another 3');
    });

    test('processes that agree never warn, and health() reports nothing', async () => {
      const clock = new ManualClock();
      const options = { limit: 100, windowMs: 1000, rules: [{ name: 'perTenant', limit: 10, windowMs: 1000 }] };
      const [a, b] = processes(clock, options, options);
      await run(clock, 3 * CF_LIVE_MS, a!.limiter, b!.limiter);
      expect([...a!.warnings.lines, ...b!.warnings.lines]).toEqual([]);
      expect((await a!.limiter.health()).configMismatch).toBeUndefined();
      expect((await b!.limiter.health()).configMismatch).toBeUndefined();
    });

    test('once the other process is gone, health() stops reporting it', async () => {
      const clock = new ManualClock();
      const [a, b] = processes(clock, { limit: 100, windowMs: 1000 }, { limit: 200, windowMs: 1000 });
      await run(clock, CF_TAKE_MS + 2000, a!.limiter, b!.limiter);
      expect((await a!.limiter.health()).configMismatch).toBeDefined();
      // b stops: its stored fingerprint goes stale (CF_LIVE_MS), then the hold runs out
      await run(clock, CF_LIVE_MS + MISMATCH_HOLD_MS + 1000, a!.limiter);
      expect((await a!.limiter.health()).configMismatch).toBeUndefined();
      expect(a!.warnings.drift).toHaveLength(1);
    });

    test('a peek sees another config too', async () => {
      const clock = new ManualClock();
      const [a, b] = processes(clock, { limit: 100, windowMs: 1000 }, { limit: 50, windowMs: 1000 });
      for (let t = 0; t < RETRY_MS + 2000; t += 1000) {
        await a!.limiter.check('tenant');
        await b!.limiter.peek('tenant');
        await a!.limiter.health();
        await b!.limiter.health();
        clock.advance(1000);
      }
      expect((await b!.limiter.health()).configMismatch?.options).toContain('limit: this process 50, another 100');
      expect(b!.warnings.drift).toHaveLength(1);
    });
  });
}
