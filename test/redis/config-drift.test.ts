/**
 * Config drift on one Redis, from two processes (two limiters built apart, each on its own ioredis client): the
 * warning once each, naming what differs, health() reporting it; and what it costs, read from INFO
 * commandstats: checks whose configs agree run exactly the Redis commands they ran without the fingerprint,
 * and a mixed deployment adds a few config-check calls, not one per check.
 */
import type Redis from 'ioredis';
import { createLimiter, type Limiter, type LimiterOptions } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { admitCommand, fairShareConfigBlock } from '../../src/redis/admission-scripts';
import { limiterKeys } from '../../src/redis/keys';
import type { LimiterSpec } from '../../src/types';
import { ManualClock } from '../conformance/store-suite';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { SPEC_DEFAULTS } from '../helpers/spec';

let server: RedisServer;
let admin: Redis;
const limiters: Limiter[] = [];
beforeAll(async () => {
  server = await startRedis();
  admin = server.client();
});
afterAll(async () => {
  for (const l of limiters) await l.destroy();
  await Promise.all(limiters.map((l) => l.close()));
  await server.stop();
});

let seq = 0;
const uniqueName = (): string => `drift-${process.pid}-${++seq}`;

/** Every command Redis ran (scripts and the commands inside them), by name. */
async function commandCounts(): Promise<Map<string, number>> {
  const stats = await admin.info('commandstats');
  return new Map([...stats.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)].map((m) => [m[1]!, Number(m[2])] as const));
}

/** What ran between two readings; script calls as one count (ioredis sends EVAL once per connection, then EVALSHA). */
function delta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, n] of after) {
    const ran = n - (before.get(name) ?? 0);
    const as = name === 'eval' || name === 'evalsha' ? 'scripts' : name;
    if (ran > 0 && name !== 'info') out[as] = (out[as] ?? 0) + ran;
  }
  return out;
}

/** A process: its own client and store, on the shared test clock. */
function processOf(clock: ManualClock, name: string, options: Omit<LimiterOptions, 'store' | 'name' | 'logger'>) {
  const warnings: string[] = [];
  const store = new RedisStore({ client: server.client(), prefix: 'drift', clock: clock.now });
  const limiter = createLimiter({ ...options, store, name, logger: { warn: (m) => void warnings.push(m) } });
  limiters.push(limiter);
  return { limiter, warnings: () => warnings.filter((w) => w.startsWith('WRN_BL_CONFIG_MISMATCH')) };
}

test('two processes with another limit and rules: each warns once, naming them; health() reports it; a few calls, not one per check', async () => {
  const clock = new ManualClock();
  const name = uniqueName();
  const a = processOf(clock, name, { limit: 100, windowMs: 1000, rules: [{ name: 'perTenant', limit: 10, windowMs: 1000 }] });
  const b = processOf(clock, name, { limit: 200, windowMs: 1000, rules: [{ name: 'perTenant', limit: 20, windowMs: 1000 }] });
  await a.limiter.check('warm');
  await b.limiter.check('warm');
  await Promise.all([a.limiter.health(), b.limiter.health()]);
  await admin.config('RESETSTAT');
  const before = await commandCounts();
  // two minutes of checks from both, ten a second each
  let checks = 0;
  for (let t = 0; t < 120_000; t += 100) {
    await a.limiter.check(`t${t % 7}`);
    await b.limiter.check(`t${t % 5}`);
    checks += 2;
    clock.advance(100);
  }
  await Promise.all([a.limiter.health(), b.limiter.health()]);
  const calls = delta(before, await commandCounts());
  const scripts = calls.scripts ?? 0;
  expect(a.warnings()).toHaveLength(1);
  expect(a.warnings()[0]).toContain('limit: this process 100, another 200');
  expect(a.warnings()[0]).toMatch(/rules\.perTenant: this process 10 per 1000 ms.*, another 20 per 1000 ms/);
  expect(b.warnings()).toHaveLength(1);
  expect(b.warnings()[0]).toContain('limit: this process 200, another 100');
  const health = await b.limiter.health();
  expect(health.configMismatch?.options).toContain('limit: this process 200, another 100');
  expect(health.status).toBe('up');
  // each process named the other's options once (a call or two each), in two minutes of 2,400 checks
  console.log(`config drift, mixed deployment: ${checks} checks, ${scripts - checks} config-check calls`);
  expect(scripts - checks).toBeGreaterThanOrEqual(0);
  expect(scripts - checks).toBeLessThanOrEqual(4);
});

test('configs that agree: the same Redis commands per check as without the fingerprint', async () => {
  const spec: LimiterSpec = {
    ...SPEC_DEFAULTS,
    name: uniqueName(),
    limit: 100,
    windowMs: 1000,
    burst: 10,
    reserve: 2,
    idleMs: 10_000,
    epochMs: 250,
    sustained: false,
  };
  const N = 600;
  /** N checks, one every 50 ms of the clock (past CF_LIVE_MS, so the fingerprint is rewritten on the way). */
  const run = async (admit: (i: number) => Promise<unknown>, clock: ManualClock) => {
    await admin.config('RESETSTAT');
    const before = await commandCounts();
    for (let i = 0; i < N; i++) {
      await admit(i);
      clock.advance(50);
    }
    return delta(before, await commandCounts());
  };
  // without: admit.lua called with the config block alone (no fingerprint: nothing checked)
  const plainClock = new ManualClock();
  const plainClient = server.client();
  const plain = admitCommand(
    plainClient,
    limiterKeys('drift', `${spec.name}-plain`),
    { config: fairShareConfigBlock(spec), rules: 0 },
    spec.concurrencyLeaseMs,
  );
  const without = await run((i) => plain(plainClock.ms, { group: `g${i % 4}`, weight: 1, cost: 1 }), plainClock);
  // with: two processes' stores of one spec (one bound each, separate clients), taking turns
  const clock = new ManualClock();
  const stores = [0, 1].map(() => new RedisStore({ client: server.client(), prefix: 'drift', clock: clock.now }).bind(spec));
  const withFingerprint = await run((i) => stores[i % 2]!.admit({ group: `g${i % 4}`, weight: 1, cost: 1 }), clock);
  console.log(`commands for ${N} checks: ${JSON.stringify(withFingerprint)}`);
  expect(withFingerprint).toEqual(without);
  expect(withFingerprint.scripts).toBe(N);
  expect(await stores[0]!.configDrift?.mismatch()).toBeUndefined();
  for (const st of stores) await st.destroy();
  await admin.del(...Object.values(limiterKeys('drift', `${spec.name}-plain`)));
});
