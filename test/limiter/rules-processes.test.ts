/**
 * Rules across processes on one redis-server: two processes check the same limiter's groups as fast as they
 * can; each rule's cap holds in every window, counted on the store's clock over both processes' admissions.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { maxInAnyWindow } from '../conformance/store-suite';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(() => server.stop());

function runChecker(args: object): Promise<string> {
  const child = spawn(
    process.execPath,
    ['-r', join(__dirname, '..', 'queue', 'fixtures', 'swc-register.js'), join(__dirname, 'fixtures', 'rule-checker.ts'), JSON.stringify(args)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 && out.includes('done') ? resolve(out) : reject(new Error(`checker exited ${String(code)}: ${out.slice(-500)}`)),
    );
  });
}

test("each rule's cap holds in every window across two processes on one Redis", async () => {
  const options = {
    name: `rules-processes-${process.pid}`,
    limit: 100_000,
    windowMs: 1000,
    rules: [
      { name: 'burst', limit: 15, windowMs: 400, algorithm: 'sliding-window' },
      { name: 'steady', limit: 40, windowMs: 1500 },
      { name: 'aligned', limit: 25, windowMs: 1000, algorithm: 'fixed-window' },
    ],
  };
  const args = { port: server.port, options, groups: ['a', 'b'], perTurn: 4, durationMs: 3000 };
  const outputs = await Promise.all([runChecker(args), runChecker(args)]);
  const admitted = outputs.flatMap((o, p) =>
    o
      .split('\n')
      .filter((l) => l.startsWith('admitted '))
      .map((l) => {
        const [, group, at] = l.split(' ');
        return { process: p, group: group!, at: Number(at), cost: 1 };
      }),
  );
  for (const group of ['a', 'b']) {
    const log = admitted.filter((e) => e.group === group);
    // both processes took part
    expect(new Set(log.map((e) => e.process)).size).toBe(2);
    expect(maxInAnyWindow(log, 400)).toBeLessThanOrEqual(15);
    expect(maxInAnyWindow(log, 1500)).toBeLessThanOrEqual(40);
    const perWindow = new Map<number, number>();
    for (const e of log) perWindow.set(Math.floor(e.at / 1000), (perWindow.get(Math.floor(e.at / 1000)) ?? 0) + 1);
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(25);
    // the rules were what bound: about the steady rule's rate over 3 s, not far below
    expect(log.length).toBeGreaterThan(40);
  }
}, 30_000);
