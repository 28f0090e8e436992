/**
 * Redis-only properties of admission: one script call, keys in one slot, recovery after SCRIPT FLUSH,
 * a TTL on every key, untrusted group ids never shaping key names, bounded state.
 */
import type Redis from 'ioredis';
import { allKeys, limiterKeys } from '../../src/redis/keys';
import { MemoryStore } from '../../src/memory/memory-store';
import { RedisStore } from '../../src/redis/redis-store';
import { admitScript, peekScript, resetScript } from '../../src/redis/lua-sources.generated';
import { loadScript } from '../../src/redis/script-loader';
import type { LimiterSpec } from '../../src/types';
import { ManualClock } from '../conformance/store-suite';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { SPEC_DEFAULTS } from '../helpers/spec';

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
});
afterAll(async () => {
  await server.stop();
});

let seq = 0;
const spec = (over: Partial<LimiterSpec> & { maxGroups?: number } = {}): LimiterSpec => ({
  ...SPEC_DEFAULTS,
  name: `r-${process.pid}-${++seq}`,
  limit: 100,
  windowMs: 1000,
  burst: 10,
  reserve: 2,
  idleMs: 2000,
  epochMs: 250,
  sustained: false,
  ...over,
});
const prefixKeys = async (prefix: string) => (await client.keys(`{${prefix}:*`)).sort();

test('admit.lua is registered under a versioned name, its includes expanded, its keys and arguments as its header declares', () => {
  const script = loadScript(admitScript);
  expect(script.numberOfKeys).toBe(7);
  expect(admitScript.keyNames).toEqual(['groups', 'seen', 'leases', 'slots', 'overrides', 'overridesDue', 'overridesIndex']);
  expect(script.lua).not.toMatch(/--!include/);
  expect(script.command).toMatch(/^bl_admit_v1_[0-9a-f]{8}$/);
  const keys = admitScript.keys({ groups: 'g', seen: 's', leases: 'l', slots: 'c', overrides: 'o', overridesDue: 'd', overridesIndex: 'i' });
  // time first, then the config block (every script that takes them), the cap and leaseMs only with a cap
  expect(admitScript.argv(keys, { nowMs: 1.5, config: 'cfg', group: 'a', weight: 2, cost: 3 })).toEqual([
    'g',
    's',
    'l',
    'c',
    'o',
    'd',
    'i',
    1.5,
    'cfg',
    'a',
    2,
    3,
  ]);
  expect(admitScript.argv(keys, { nowMs: 0, config: 'cfg', group: 'a', weight: 2, cost: 3, cap: 4, leaseMs: 5 })).toEqual([
    'g',
    's',
    'l',
    'c',
    'o',
    'd',
    'i',
    0,
    'cfg',
    'a',
    2,
    3,
    4,
    5,
  ]);
});

test('peek.lua and reset.lua take the groups and seen keys (peek the overrides too); peek the time, the config block, group and weight; reset the group', () => {
  expect(peekScript.keyNames).toEqual(['groups', 'seen', 'overrides']);
  expect(resetScript.keyNames).toEqual(['groups', 'seen']);
  expect(peekScript.argv(['g', 's', 'o'], { nowMs: 7, config: 'cfg', group: 'a', weight: 2 })).toEqual(['g', 's', 'o', 7, 'cfg', 'a', 2]);
  expect(resetScript.argv(['g', 's'], { group: 'a' })).toEqual(['g', 's', 'a']);
});

test('a test clock keeps its µs: the scripts get nowMs with its fraction and decide as the MemoryStore does to the µs', async () => {
  // one token per ms (burst 1): waits and refills turn on fractions of a ms; 0.1 has no exact binary form
  const shape = spec({ limit: 1000, windowMs: 1000, burst: 1, reserve: 0 });
  const clock = new ManualClock();
  clock.ms += 0.7;
  const redis = new RedisStore({ client, prefix: 'us', clock: clock.now, maxBatch: 1 }).bind(shape);
  const memory = new MemoryStore({ clock: clock.now }).bind(shape);
  const steps = [0.1, 0.3, 0.6, 0.001, 0.999, 0.1, 0.9, 0.5, 0.5, 0.2, 0.3, 0.5, 0.001, 1.999];
  for (let i = 0; i < 60; i++) {
    clock.advance(steps[i % steps.length]!);
    const check = { group: `g${i % 2}`, weight: 1, cost: 1 };
    expect(await redis.admit(check)).toEqual(await memory.admit(check));
  }
  await redis.destroy();
});

test("peek and reset with hostile group ids: no key but the limiter's two, ids come back unchanged, peek writes nothing", async () => {
  const limiter = new RedisStore({ client, prefix: 'hostile-pr' }).bind(spec({ name: 'h' }));
  const ids = ['{', '}', ':', '{hostile-pr:h}:groups', '}{', 'ünï©ødé 🚦', '\u0000\r\n', 'x'.repeat(10 * 1024)];
  for (const group of ids) {
    expect(await limiter.peek({ group, weight: 1 })).toMatchObject({ group, allowed: true });
    expect(await prefixKeys('hostile-pr')).toEqual([]);
  }
  for (const group of ids) await limiter.admit({ group, weight: 1, cost: 1 });
  for (const group of ids) expect(await limiter.reset(group)).toBe(true);
  // the limiter's own state under '' and its stored fingerprint (byte 253: docs/operations.md "Config drift")
  expect(await client.hlen('{hostile-pr:h}:groups')).toBe(2);
  expect(await client.zcard('{hostile-pr:h}:seen')).toBe(0);
  // '' names that state, never a group: reset.lua refuses it (the limiter rejects it before any store call)
  await expect(limiter.reset('')).rejects.toThrow(/ERR_BL_GROUP_EMPTY/);
  expect(await client.hlen('{hostile-pr:h}:groups')).toBe(2);
  await limiter.destroy();
});

test('uses redis TIME when no clock is given', async () => {
  const limiter = new RedisStore({ client, prefix: 'rt' }).bind(spec());
  const before = Date.now();
  const d = await limiter.admit({ group: 'a', weight: 1, cost: 1 });
  expect(d.allowed).toBe(true);
  expect(d.at).toBeGreaterThanOrEqual(before - 1000);
  expect(d.at).toBeLessThanOrEqual(Date.now() + 1000);
  await limiter.destroy();
});

test('one admission is one script call', async () => {
  const limiter = new RedisStore({ client, prefix: 'one' }).bind(spec());
  await limiter.admit({ group: 'warm', weight: 1, cost: 1 });
  await client.config('RESETSTAT');
  for (let i = 0; i < 20; i++) await limiter.admit({ group: `g${i % 3}`, weight: 1, cost: 1 });
  const stats = await client.info('commandstats');
  const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  expect(calls('evalsha') + calls('eval')).toBe(20);
  await limiter.destroy();
});

test('recovers after SCRIPT FLUSH (EVAL on NOSCRIPT)', async () => {
  // A fixed clock: on a loaded machine a token may refill between the two calls on Redis TIME (remaining 9).
  const limiter = new RedisStore({ client, prefix: 'flush', clock: new ManualClock().now }).bind(spec());
  expect((await limiter.admit({ group: 'a', weight: 1, cost: 1 })).allowed).toBe(true);
  await client.script('FLUSH');
  const d = await limiter.admit({ group: 'a', weight: 1, cost: 1 });
  expect(d.allowed).toBe(true);
  expect(d.remaining).toBe(8); // state survived; only the script cache was flushed
  await limiter.destroy();
});

test('every key has a TTL of idle + window + epoch at most, also after groups come and go', async () => {
  const clock = new ManualClock();
  const s = spec({ idleMs: 500 });
  const limiter = new RedisStore({ client, prefix: 'ttl', clock: clock.now }).bind(s);
  const ttlMs = s.idleMs + s.windowMs + s.epochMs;
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 5; i++) await limiter.admit({ group: `r${round}-g${i}`, weight: 1, cost: 1 });
    const keys = await prefixKeys('ttl');
    expect(keys).toHaveLength(2);
    for (const k of keys) {
      const pttl = await client.pttl(k);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(ttlMs);
    }
    clock.advance(800); // the previous round's groups go idle and are trimmed
  }
  await limiter.destroy();
  expect(await prefixKeys('ttl')).toEqual([]);
});

test('hostile group ids never create extra keys and come back unchanged', async () => {
  const limiter = new RedisStore({ client, prefix: 'hostile' }).bind(spec({ name: 'h' }));
  const ids = ['{', '}', ':', '{hostile:h}:groups', '}{', 'ünï©ødé 🚦', '\u0000\r\n', 'x'.repeat(10 * 1024)];
  for (const group of ids) {
    const d = await limiter.admit({ group, weight: 1, cost: 1 });
    expect(d.group).toBe(group);
    expect(d.allowed).toBe(true);
  }
  const keys = await prefixKeys('hostile');
  expect(keys).toEqual(
    allKeys(limiterKeys('hostile', 'h'))
      .filter((k) => /:(groups|seen)$/.test(k))
      .sort(),
  );
  expect(await client.dbsize()).toBeLessThanOrEqual(2);
  // + the limiter's own state under '' and its stored fingerprint (byte 253)
  expect(await client.hlen('{hostile:h}:groups')).toBe(ids.length + 2);
  // '' names that state, never a group: the script refuses it (createLimiter rejects it before any store call).
  await expect(limiter.admit({ group: '', weight: 1, cost: 1 })).rejects.toThrow(/ERR_BL_GROUP_EMPTY/);
  expect(await client.hlen('{hostile:h}:groups')).toBe(ids.length + 2);
  await limiter.destroy();
});

test('maxGroups bounds the state however many ids are sprayed', async () => {
  const s = spec({ maxGroups: 50 });
  const limiter = new RedisStore({ client, prefix: 'spray' }).bind(s);
  const pipeline = [];
  for (let i = 0; i < 2000; i++) pipeline.push(limiter.admit({ group: `spray-${i}`, weight: 1000, cost: 1 }));
  const last = (await Promise.all(pipeline)).at(-1)!;
  expect(last.group).toBe('*overflow*');
  expect(last.activeGroups).toBe(51);
  expect(await client.hlen(`{spray:${s.name}}:groups`)).toBe(53); // + the limiter's own state under '' and its fingerprint
  expect(await client.zcard(`{spray:${s.name}}:seen`)).toBe(51);
  await limiter.destroy();
});

test('the groups hash (with the limiter state) evicted mid-run: replies stay sane and the shares come back', async () => {
  const clock = new ManualClock();
  const s = spec();
  const limiter = new RedisStore({ client, prefix: 'evict', clock: clock.now }).bind(s);
  await limiter.admit({ group: 'a', weight: 1, cost: 1 });
  expect((await limiter.admit({ group: 'b', weight: 3, cost: 1 })).guaranteed).toBe(75);
  clock.advance(100);
  await client.del(`{evict:${s.name}}:groups`);
  const replies = [];
  for (let i = 0; i < 30; i++) {
    replies.push(await limiter.admit({ group: i % 2 ? 'a' : 'b', weight: i % 2 ? 1 : 3, cost: 1 }));
    clock.advance(5);
  }
  for (const d of replies) {
    expect(d.guaranteed).toBeGreaterThanOrEqual(0);
    expect(d.guaranteed).toBeLessThanOrEqual(s.limit);
    expect(d.limit).toBeLessThanOrEqual(s.limit);
    expect(Number.isSafeInteger(d.retryAfterMs) && Number.isSafeInteger(d.remaining)).toBe(true);
  }
  expect(replies.at(-1)).toMatchObject({ group: 'a', guaranteed: 25, activeGroups: 2 });
  expect(replies.at(-2)).toMatchObject({ group: 'b', guaranteed: 75, activeGroups: 2 });
  await limiter.destroy();
});

test('after a big backward clock step, every call renews the TTLs (time stands still, TTLs do not)', async () => {
  const clock = new ManualClock();
  const s = spec();
  const limiter = new RedisStore({ client, prefix: 'back', clock: clock.now }).bind(s);
  await limiter.admit({ group: 'a', weight: 1, cost: 1 });
  clock.advance(-3_600_000);
  const keys = await prefixKeys('back');
  expect(keys).toHaveLength(2); // groups (with the limiter state) and seen
  for (const k of keys) await client.pexpire(k, 50); // about to lapse, as an hour of real time would make them
  await limiter.admit({ group: 'a', weight: 1, cost: 1 }); // same group, no epoch passes: only the fix renews
  for (const k of keys) expect(await client.pttl(k)).toBeGreaterThan(s.idleMs);
  await limiter.destroy();
});

test('concurrency: hostile group ids only as lease members and slot fields, two keys more, each with a TTL of lease + 1 s', async () => {
  const limiter = new RedisStore({ client, prefix: 'slots' }).bind(spec({ name: 's', concurrencyLeaseMs: 5000 }));
  const ids = ['{', '}', ':', '1-1:x', '{slots:s}:leases', '\u0000\r\n', 'ünï©ødé 🚦', 'x'.repeat(10 * 1024)];
  const held = [];
  for (const group of ids) {
    const d = await limiter.admit({ group, weight: 1, cost: 1, concurrency: 1 });
    expect(d).toMatchObject({ allowed: true, group, concurrency: { limit: 1, inFlight: 1 } });
    expect((await limiter.admit({ group, weight: 1, cost: 1, concurrency: 1 })).reason).toBe('concurrency');
    held.push(d);
  }
  const keys = allKeys(limiterKeys('slots', 's'));
  expect(await prefixKeys('slots')).toEqual(keys.filter((k) => /:(groups|seen|leases|slots)$/.test(k)).sort());
  for (const k of keys.filter((k) => /:(leases|slots)$/.test(k))) {
    const pttl = await client.pttl(k);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(6000);
  }
  for (const d of held) expect(await limiter.release!(d.concurrency!.lease!)).toBe(true);
  // every slot released: the counts are gone (the sequence stays), the leases with them
  expect(await client.hkeys('{slots:s}:slots')).toEqual(['']);
  expect(await client.exists('{slots:s}:leases')).toBe(0);
  await limiter.destroy();
  expect(await prefixKeys('slots')).toEqual([]);
});
