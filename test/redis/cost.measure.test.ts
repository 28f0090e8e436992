/**
 * Measurement, not a unit test (runs only with BL_MEASURE=1): server CPU per admit (INFO commandstats) at
 * 10, 10 000 and 100 000 active groups, MEMORY USAGE per active group, and MemoryStore decisions/s.
 */
import type Redis from 'ioredis';
import { MemoryStore } from '../../src/memory/memory-store';
import { RedisStore } from '../../src/redis/redis-store';
import { resolvePlans } from '../../src/limiter/plan-options';
import { resolveRules } from '../../src/limiter/rule-options';
import type { LimiterSpec, LimiterStore } from '../../src/types';
import { startRedis, type RedisServer } from '../helpers/redis-server';

const run = process.env.BL_MEASURE === '1' ? test : test.skip;
let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  if (process.env.BL_MEASURE === '1') {
    server = await startRedis();
    client = server.client();
  }
});
afterAll(async () => {
  await server?.stop();
});

const spec = (name: string): LimiterSpec =>
  ({
    name,
    limit: 1000,
    windowMs: 1000,
    burst: 50,
    reserve: 10,
    idleMs: 600_000,
    epochMs: 250,
    sustained: false,
    maxGroups: 200_000,
    probationMs: 0,
    concurrencyLeaseMs: 60_000,
  }) satisfies LimiterSpec;

async function inBatches(n: number, batch: number, f: (i: number) => Promise<unknown>) {
  for (let i = 0; i < n; i += batch) await Promise.all(Array.from({ length: Math.min(batch, n - i) }, (_, j) => f(i + j)));
}

async function usecPerCall(limiter: LimiterStore, groups: number, calls: number): Promise<number> {
  await client.config('RESETSTAT');
  await inBatches(calls, 50, () => limiter.admit({ group: `g${Math.floor(Math.random() * groups)}`, weight: 1 + (groups % 3), cost: 1 }));
  const stats = await client.info('commandstats');
  return Number(/cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(stats)?.[1]);
}

run(
  'server CPU per admit is flat in the number of active groups; memory per group',
  async () => {
    const lines: string[] = [];
    for (const groups of [10, 10_000, 100_000]) {
      const s = spec(`cost-${groups}`);
      const limiter = new RedisStore({ client, prefix: 'm' }).bind(s);
      await inBatches(groups, 200, (i) => limiter.admit({ group: `g${i}`, weight: 1 + (groups % 3), cost: 1 }));
      const us = await usecPerCall(limiter, groups, 20_000);
      const bytes =
        Number(await client.memory('USAGE', `{m:${s.name}}:groups`, 'SAMPLES', 0)) +
        Number(await client.memory('USAGE', `{m:${s.name}}:seen`, 'SAMPLES', 0));
      lines.push(`groups=${groups} usec_per_admit=${us} bytes_per_group=${(bytes / groups).toFixed(0)}`);
      await limiter.destroy();
    }
    console.log(lines.join('\n'));
  },
  300_000,
);

/** Redis CPU per check (µs, all script calls) for `calls` checks spread over `groups` groups. */
async function usecPerCheck(limiter: LimiterStore, groups: number, calls: number): Promise<number> {
  await client.config('RESETSTAT');
  await inBatches(calls, 50, () => limiter.admit({ group: `g${Math.floor(Math.random() * groups)}`, weight: 1, cost: 1 }));
  const stats = await client.info('commandstats');
  return Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(stats)?.[1]) / calls;
}

// Two rules a service might set: each tenant ≤ 10/s (sliding window) and ≤ 5,000/h (token bucket); the global
// limit and the rules are set high enough that most checks are admitted (the allow path spends in every rule).
const TWO_RULES = resolveRules([
  { name: 'second', limit: 1_000_000, windowMs: 1000, algorithm: 'sliding-window' },
  { name: 'hour', limit: 100_000_000, windowMs: 3_600_000 },
]);

run(
  'server CPU per check with two rules vs none (batched and one call per check); memory per group',
  async () => {
    const lines: string[] = [];
    for (const maxBatch of [64, 1]) {
      for (const groups of [10, 10_000]) {
        const us: number[] = [];
        for (const rules of [undefined, TWO_RULES]) {
          const s = {
            ...spec(`rules-${maxBatch}-${groups}-${rules ? 2 : 0}`),
            limit: 1_000_000,
            burst: 50_000,
            reserve: 10,
            ...(rules ? { rules } : {}),
          };
          const limiter = new RedisStore({ client, prefix: 'm', maxBatch }).bind(s);
          await inBatches(groups, 200, (i) => limiter.admit({ group: `g${i}`, weight: 1, cost: 1 }));
          const best = Math.min(...(await sequential(3, () => usecPerCheck(limiter, groups, 20_000))));
          us.push(best);
          const bytes =
            Number(await client.memory('USAGE', `{m:${s.name}}:groups`, 'SAMPLES', 0)) +
            Number(await client.memory('USAGE', `{m:${s.name}}:seen`, 'SAMPLES', 0));
          lines.push(
            `maxBatch=${maxBatch} groups=${groups} rules=${rules ? 2 : 0} usec_per_check=${best.toFixed(2)} bytes_per_group=${(bytes / groups).toFixed(0)}`,
          );
          await limiter.destroy();
        }
        lines.push(`maxBatch=${maxBatch} groups=${groups} ratio two rules / none = ${(us[1]! / us[0]!).toFixed(2)}`);
      }
    }
    console.log(lines.join('\n'));
  },
  600_000,
);

/** Redis CPU per check (µs, every script call: admit and, with `release`, release.lua) with a concurrency cap. */
async function usecPerCapped(limiter: LimiterStore, groups: number, calls: number, release: boolean): Promise<number> {
  await client.config('RESETSTAT');
  await inBatches(calls, 50, async () => {
    const d = await limiter.admit({ group: `g${Math.floor(Math.random() * groups)}`, weight: 1, cost: 1, concurrency: 1_000_000 });
    if (release && d.concurrency?.lease) await limiter.release!(d.concurrency.lease);
  });
  const stats = await client.info('commandstats');
  return Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(stats)?.[1]) / calls;
}

run(
  'server CPU per check with a concurrency cap vs none (batched and one call per check)',
  async () => {
    const lines: string[] = [];
    for (const maxBatch of [64, 1]) {
      for (const groups of [10, 10_000]) {
        const s = { ...spec(`cc-${maxBatch}-${groups}`), limit: 1_000_000, burst: 50_000, reserve: 10 };
        const limiter = new RedisStore({ client, prefix: 'm', maxBatch }).bind(s);
        await inBatches(groups, 200, (i) => limiter.admit({ group: `g${i}`, weight: 1, cost: 1 }));
        const none = Math.min(...(await sequential(3, () => usecPerCheck(limiter, groups, 20_000))));
        const released = Math.min(...(await sequential(3, () => usecPerCapped(limiter, groups, 20_000, true))));
        // slots left held: 60,000 leases in flight by the end
        const held = Math.min(...(await sequential(3, () => usecPerCapped(limiter, groups, 20_000, false))));
        lines.push(
          `maxBatch=${maxBatch} groups=${groups} usec_per_check none=${none.toFixed(2)} capped+release=${released.toFixed(2)} capped_held=${held.toFixed(2)}`,
        );
        await limiter.destroy();
      }
    }
    console.log(lines.join('\n'));
  },
  600_000,
);

async function sequential<T>(n: number, f: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(await f());
  return out;
}

run(
  'MemoryStore decisions per second',
  async () => {
    let now = 1_700_000_000_000;
    for (const groups of [10, 10_000, 100_000]) {
      const limiter = new MemoryStore({ clock: () => now }).bind(spec(`mem-${groups}`));
      for (let i = 0; i < groups; i++) await limiter.admit({ group: `g${i}`, weight: 1, cost: 1 });
      const n = 300_000;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        now += 0.01;
        await limiter.admit({ group: `g${i % groups}`, weight: 1, cost: 1 });
      }
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      console.log(`MemoryStore groups=${groups}: ${(n / s).toFixed(0)} decisions/s`);
    }
  },
  300_000,
);

// Three plans, each with its own per-second rule (limits differ, so three config blocks), all inheriting the hour
// rule: a turn's checks go in one call per plan. Against no rules and the same two rules without plans.
const THREE_PLANS = resolvePlans(
  Object.fromEntries(
    ['free', 'pro', 'enterprise'].map((name, i) => [
      name,
      { rules: [{ name: 'second', limit: 1_000_000 + i, windowMs: 1000, algorithm: 'sliding-window' }] },
    ]),
  ),
  TWO_RULES,
  1000,
)!;

run(
  'server CPU per check with two rules and a plan (three plans, checks spread over them) vs two rules and none',
  async () => {
    const lines: string[] = [];
    const groups = 10_000;
    const us: number[] = [];
    for (const variant of ['none', 'two rules', 'two rules, three plans'] as const) {
      const s: LimiterSpec = {
        ...spec(`plans-${variant.replace(/\W+/g, '-')}`),
        limit: 1_000_000,
        burst: 50_000,
        reserve: 10,
        ...(variant === 'none' ? {} : { rules: TWO_RULES }),
        ...(variant === 'two rules, three plans' ? { plans: THREE_PLANS } : {}),
      };
      const limiter = new RedisStore({ client, prefix: 'm' }).bind(s);
      const planOf = (i: number): string | undefined => (s.plans ? ['free', 'pro', 'enterprise'][i % 3] : undefined);
      await inBatches(groups, 200, (i) => limiter.admit({ group: `g${i}`, weight: 1, cost: 1, plan: planOf(i) }));
      const measure = async (): Promise<number> => {
        await client.config('RESETSTAT');
        const calls = 20_000;
        await inBatches(calls, 50, () => {
          const g = Math.floor(Math.random() * groups);
          return limiter.admit({ group: `g${g}`, weight: 1, cost: 1, plan: planOf(g) });
        });
        const stats = await client.info('commandstats');
        return Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(stats)?.[1]) / calls;
      };
      const best = Math.min(...(await sequential(3, measure)));
      us.push(best);
      lines.push(`${variant}: usec_per_check=${best.toFixed(2)}`);
      await limiter.destroy();
    }
    lines.push(`ratio two rules and a plan / none = ${(us[2]! / us[0]!).toFixed(2)}; / two rules = ${(us[2]! / us[1]!).toFixed(2)}`);
    console.log(lines.join('\n'));
  },
  600_000,
);
