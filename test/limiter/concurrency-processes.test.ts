/**
 * Request concurrency across processes on one redis-server: caps of 1, 3 and 5 never exceeded while two
 * processes take and release slots as fast as they can; and the slots of a process killed with SIGKILL come
 * back when their leases end (real Redis time).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Redis from 'ioredis';
import { createLimiter } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(() => server.stop());

function holder(args: object): { child: ChildProcess; output: Promise<string>; line: (prefix: string) => Promise<void> } {
  const child = spawn(
    process.execPath,
    ['-r', join(__dirname, '..', 'queue', 'fixtures', 'swc-register.js'), join(__dirname, 'fixtures', 'slot-holder.ts'), JSON.stringify(args)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const waiting: Array<[string, () => void]> = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const [prefix, resolve] of waiting) if (out.includes(prefix)) resolve();
  });
  const output = new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 && out.includes('done') ? resolve(out) : reject(new Error(`holder exited ${String(code)}: ${out.slice(-500)}`)),
    );
  });
  return { child, output, line: (prefix) => new Promise<void>((resolve) => (out.includes(prefix) ? resolve() : waiting.push([prefix, resolve]))) };
}

/** The most intervals that overlap at any instant. */
function mostAtOnce(intervals: ReadonlyArray<readonly [number, number]>): number {
  const edges = intervals.flatMap(([from, to]) => [[from, 1] as const, [to, -1] as const]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]); // an end before a start at the same instant
  let now = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (now += d));
  return most;
}

test('caps of 1, 3 and 5 are never exceeded by two processes taking and releasing slots', async () => {
  // timeoutMs: a busy machine's slow answer would be a store failure, which is not what these tests measure.
  const options = { name: `cc-processes-${process.pid}`, limit: 100_000, windowMs: 1000, timeoutMs: 30_000 };
  const caps = { one: 1, three: 3, five: 5 };
  const args = { port: server.port, options, mode: 'cycle', caps, perGroup: 8, durationMs: 2500 };
  const outputs = await Promise.all([holder(args).output, holder(args).output]);
  for (const [group, cap] of Object.entries(caps)) {
    const held = outputs.flatMap((o, p) =>
      o
        .split('\n')
        .filter((l) => l.startsWith(`held ${group} `))
        .map((l) => ({ process: p, at: [Number(l.split(' ')[2]), Number(l.split(' ')[3])] as const })),
    );
    expect(new Set(held.map((h) => h.process)).size).toBe(2);
    expect(held.length).toBeGreaterThan(4 * cap);
    // each interval lies inside the time its slot was held: a cap exceeded shows as more overlapping
    expect(mostAtOnce(held.map((h) => h.at))).toBeLessThanOrEqual(cap);
    // the cap was what bound (16 workers wanted the group's slots)
    expect(mostAtOnce(held.map((h) => h.at))).toBe(cap);
  }
}, 30_000);

test("a SIGKILLed process's slots come back when their leases end", async () => {
  const leaseMs = 1500;
  const options = {
    name: `cc-kill-${process.pid}`,
    limit: 100_000,
    windowMs: 1000,
    concurrency: 5,
    tuning: { concurrencyLeaseMs: leaseMs },
    timeoutMs: 30_000,
  };
  const h = holder({ port: server.port, options, mode: 'hold', group: 'k', count: 5 });
  await h.line('held 5');
  const killedAt = Date.now();
  h.child.kill('SIGKILL');
  await h.output.catch(() => undefined);
  const client = new Redis({ port: server.port, host: '127.0.0.1' });
  const limiter = createLimiter({ ...options, store: new RedisStore({ client }) });
  try {
    const before = await limiter.check('k');
    expect(before).toMatchObject({ allowed: false, policy: 'concurrency', concurrency: { limit: 5, inFlight: 5 } });
    let back = await limiter.check('k');
    // The holder took its five slots one after another (far apart on a loaded machine): their leases end
    // one after another too, so wait until this check's slot is the only one in flight.
    while (!back.allowed || back.concurrency?.inFlight !== 1) {
      if (back.allowed) await limiter.release(back);
      expect(Date.now() - killedAt).toBeLessThan(leaseMs + 10_000);
      // another group's slot, taken and released, keeps the keys alive: k's slots can only come back swept
      await limiter.release(await limiter.check('other'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      back = await limiter.check('k');
    }
    // not before the leases could have ended, and all five come back
    expect(Date.now() - killedAt).toBeGreaterThan(leaseMs - 500);
    const rest = await Promise.all(Array.from({ length: 5 }, () => limiter.check('k')));
    expect(rest.filter((d) => d.allowed)).toHaveLength(4);
  } finally {
    await limiter.destroy();
    await limiter.close();
    client.disconnect();
  }
}, 30_000);
