/**
 * Fairness at a small limit with the default burst and reserve (limit 100/s): seeded Poisson tenants next to
 * a flood, on the store's injected clock. Before the small-limit tuning (burst 5, reserve 1, a 1-token green
 * bucket) light tenants lost 20–30 % of requests they were entitled to and the flood got 1.2–1.3× its fair
 * share. Same harness as store-suite.ts.
 */
import { resolveLimiterOptions } from '../../src/limiter/options';
import type { LimiterSpec, LimiterStore } from '../../src/types';
import { ManualClock, maxInAnyWindow, seededRandom, useHarness, type StoreHarness } from './store-suite';

interface Tenant {
  readonly name: string;
  readonly rate: number;
  readonly weight: number;
}

const random = seededRandom;

/** Weighted max-min fair split of `capacity` among measured demands. */
export function waterFill(capacity: number, demands: ReadonlyArray<Tenant>): Map<string, number> {
  const share = new Map(demands.map((d) => [d.name, 0]));
  let left = capacity;
  let open = demands.filter((d) => d.rate > 0);
  while (open.length > 0 && left > 1e-9) {
    const unit = left / open.reduce((s, d) => s + d.weight, 0);
    const done = open.filter((d) => d.rate - share.get(d.name)! <= unit * d.weight);
    if (done.length === 0) {
      for (const d of open) share.set(d.name, share.get(d.name)! + unit * d.weight);
      break;
    }
    for (const d of done) {
      left -= d.rate - share.get(d.name)!;
      share.set(d.name, d.rate);
    }
    open = open.filter((d) => !done.includes(d));
  }
  return share;
}

let seq = 0;
/** The resolved defaults for limit 100 per second (burst 8, reserve 2). */
function defaultSpec(): LimiterSpec {
  seq += 1;
  const { spec } = resolveLimiterOptions({ limit: 100, windowMs: 1000, name: `small-${process.pid}-${seq}` });
  return spec;
}

/** Plays Poisson arrivals for `seconds`; counts demand and admissions after a 2 s warm-up. */
async function play(st: LimiterStore, clock: ManualClock, tenants: ReadonlyArray<Tenant>, seconds: number, seed: number) {
  const next = random(seed);
  const arrivals: Array<{ t: number; tenant: Tenant }> = [];
  for (const tenant of tenants) {
    for (let t = -Math.log(1 - next()) * (1000 / tenant.rate); t < seconds * 1000; t -= Math.log(1 - next()) * (1000 / tenant.rate)) {
      arrivals.push({ t, tenant });
    }
  }
  arrivals.sort((a, b) => a.t - b.t);
  const start = clock.ms;
  const demand = new Map<string, number>();
  const admitted = new Map<string, number>();
  const log: Array<{ at: number; cost: number }> = [];
  for (const { t, tenant } of arrivals) {
    clock.ms = start + t;
    const d = await st.admit({ group: tenant.name, weight: tenant.weight, cost: 1 });
    if (d.allowed) log.push({ at: d.at, cost: 1 });
    if (t < 2000) continue;
    demand.set(tenant.name, (demand.get(tenant.name) ?? 0) + 1);
    if (d.allowed) admitted.set(tenant.name, (admitted.get(tenant.name) ?? 0) + 1);
  }
  const steady = seconds - 2;
  const measured = tenants.map((x) => ({ ...x, rate: (demand.get(x.name) ?? 0) / steady }));
  return { demand, admitted, log, measured, rateOf: (n: string) => (admitted.get(n) ?? 0) / steady };
}

export function describeSmallLimitCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`fairness at limit 100/s with default burst and reserve: ${name}`, () => {
    const bindAll = useHarness(setup);
    const bind = (clock: ManualClock, s: LimiterSpec): LimiterStore => bindAll(clock, s)[0]!;
    const lights = Array.from({ length: 6 }, (_, i) => ({ name: `light-${i}`, rate: 5, weight: 1 }));

    test('Poisson 5/s tenants next to a flood and a weight-3 tenant get ≥ 95% of their demand; shares max-min fair', async () => {
      const clock = new ManualClock();
      const s = defaultSpec();
      const st = bind(clock, s);
      const tenants = [{ name: 'flood', rate: 200, weight: 1 }, { name: 'acme', rate: 60, weight: 3 }, ...lights];
      const r = await play(st, clock, tenants, 14, 11);
      expect(maxInAnyWindow(r.log, s.windowMs)).toBeLessThanOrEqual(s.limit);
      let lightDemand = 0;
      let lightAdmitted = 0;
      for (const l of lights) {
        const d = r.demand.get(l.name)!;
        const a = r.admitted.get(l.name) ?? 0;
        expect(a / d).toBeGreaterThanOrEqual(0.9); // each; a few clumps may still meet a busy bucket
        lightDemand += d;
        lightAdmitted += a;
      }
      expect(lightAdmitted / lightDemand).toBeGreaterThanOrEqual(0.95);
      const fair = waterFill(s.limit - s.burst + 1, r.measured);
      expect(r.rateOf('acme') / fair.get('acme')!).toBeGreaterThan(0.9);
      expect(r.rateOf('acme') / fair.get('acme')!).toBeLessThan(1.1);
      expect(r.rateOf('flood') / fair.get('flood')!).toBeLessThan(1.15);
    });

    test('weights 3:1 under flood split 3:1 (±10%) while light tenants keep ≥ 90% of their demand', async () => {
      const clock = new ManualClock();
      const s = defaultSpec();
      const st = bind(clock, s);
      const tenants = [{ name: 'gold', rate: 200, weight: 3 }, { name: 'basic', rate: 200, weight: 1 }, ...lights.slice(0, 4)];
      const r = await play(st, clock, tenants, 12, 5);
      const ratio = r.rateOf('gold') / r.rateOf('basic');
      expect(ratio).toBeGreaterThan(3 * 0.9);
      expect(ratio).toBeLessThan(3 * 1.1);
      let lightDemand = 0;
      let lightAdmitted = 0;
      for (const l of lights.slice(0, 4)) {
        lightDemand += r.demand.get(l.name)!;
        lightAdmitted += r.admitted.get(l.name) ?? 0;
      }
      expect(lightAdmitted / lightDemand).toBeGreaterThanOrEqual(0.9);
      expect(maxInAnyWindow(r.log, s.windowMs)).toBeLessThanOrEqual(s.limit);
    });
  });
}
