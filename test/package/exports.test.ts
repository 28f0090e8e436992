/** The published entry points, loaded the way users load them: by package name, with require and import. */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const run = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' });

test('require() resolves every entry point from dist', () => {
  const out = run([
    '-e',
    `
    const core = require('bulk-limiter');
    const express = require('bulk-limiter/express');
    const koa = require('bulk-limiter/koa');
    const fastify = require('bulk-limiter/fastify');
    const nest = require('bulk-limiter/nest');
    console.log([typeof core.createLimiter, typeof core.MemoryStore, typeof core.RedisStore, typeof core.Dispatcher,
      typeof core.Worker, typeof core.RetryLaterError, typeof express.bulkLimiter, typeof koa.bulkLimiter,
      typeof fastify.bulkLimiter, typeof fastify.jobStatus, typeof fastify.dashboard, typeof nest.BulkLimiterModule,
      typeof nest.BulkLimiterGuard, typeof nest.BulkLimit, typeof nest.JobHandler].join(','));`,
  ]);
  expect(out.trim()).toBe(Array(15).fill('function').join(','));
});

test('import resolves the same entry points and a limiter answers', () => {
  const out = run([
    '--input-type=module',
    '-e',
    `
    import { createLimiter } from 'bulk-limiter';
    import { bulkLimiter } from 'bulk-limiter/express';
    import { bulkLimiter as koaLimiter } from 'bulk-limiter/koa';
    import { bulkLimiter as fastifyLimiter } from 'bulk-limiter/fastify';
    import { BulkLimiterModule } from 'bulk-limiter/nest';
    const limiter = createLimiter({ limit: 10, windowMs: 1000 });
    const d = await limiter.check('tenant-a');
    console.log(d.allowed, typeof bulkLimiter, typeof koaLimiter, typeof fastifyLimiter, typeof BulkLimiterModule.forRoot);`,
  ]);
  expect(out.trim()).toBe('true function function function function');
});
