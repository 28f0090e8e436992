/**
 * A RedisStore app bundled into one file with esbuild and run from a directory with nothing else in it: the Lua
 * scripts must be part of the compiled JS (a bundled app used to die on ENOENT …/lua/admit.lua).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import type Redis from 'ioredis';
import { startRedis, type RedisServer } from '../helpers/redis-server';

const root = join(__dirname, '..', '..');
let server: RedisServer;
let client: Redis;
let dir: string;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
  dir = mkdtempSync(join(tmpdir(), 'bl-bundle-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await server.stop();
});

// Admission (admit.lua), deferral (admit-defer.lua) and a queue script (get-job.lua); 'deny' so a store
// failure cannot pass for an admission.
const APP = `
const Redis = require('ioredis');
const { createLimiter, RedisStore } = require('bulk-limiter');
const client = new Redis(Number(process.env.REDIS_PORT), '127.0.0.1');
const limiter = createLimiter({
  store: new RedisStore({ client, prefix: 'bundled' }), name: 'app', limit: 2, windowMs: 60000, onStoreError: 'deny',
});
(async () => {
  const decisions = [];
  for (let i = 0; i < 4; i++) decisions.push(await limiter.check('tenant-a', { defer: { type: 'report', payload: { i } } }));
  const deferred = decisions.find((d) => d.job);
  const job = deferred ? await limiter.getJob(deferred.job.id) : null;
  console.log(JSON.stringify({ allowed: decisions.map((d) => d.allowed), deferred: Boolean(deferred), jobType: job && job.type, cwd: process.cwd() }));
  await limiter.close();
  client.disconnect();
})().catch((err) => { console.error(err); process.exit(1); });
`;

test('an esbuild bundle of a RedisStore app runs from another directory', async () => {
  const outfile = join(dir, 'app.js');
  // Resolved from the repository, as an app's bundler resolves the installed package: by name, through `exports`.
  buildSync({ stdin: { contents: APP, resolveDir: root, loader: 'js' }, bundle: true, platform: 'node', format: 'cjs', outfile, logLevel: 'silent' });
  expect(readdirSync(dir)).toEqual(['app.js']);

  const out = execFileSync(process.execPath, [outfile], { cwd: dir, env: { ...process.env, REDIS_PORT: String(server.port) }, encoding: 'utf8' });
  const result = JSON.parse(out) as { allowed: boolean[]; deferred: boolean; jobType: string | null; cwd: string };
  expect(result.cwd).toBe(dir);
  expect(result.allowed.slice(0, 2)).toEqual([true, true]);
  expect(result.allowed).toContain(false);
  expect(result.deferred).toBe(true);
  expect(result.jobType).toBe('report');
  expect(await client.keys('{bundled:app}*')).not.toEqual([]);
});
