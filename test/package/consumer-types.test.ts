/**
 * The packed package in fresh consumer projects, type-checked with skipLibCheck: false under every module
 * resolution mode (node10, node16 as CJS .ts and ESM .mts, bundler). The core project installs only typescript
 * and @types/node: the root entry's declarations must need nothing else (no ioredis, express or koa types).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { pack } = require('../../scripts/pack') as { pack: (dir: string) => { tarball: string } };

const root = join(__dirname, '..', '..');
/** The versions this repository tests with, so npm finds them in its cache. */
const version = (name: string): string =>
  (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

const CORE = `
import { ConfigError, Dispatcher, MemoryStore, Worker, createLimiter, type Decision, type JobInfo, type RedisStoreOptions } from 'bulk-limiter';

export async function decide(group: string): Promise<number> {
  const limiter = createLimiter({ store: new MemoryStore(), name: 'api', limit: 100, windowMs: 1000 });
  const decision: Decision = await limiter.check(group, { cost: 1, weight: 2 });
  const job: JobInfo | null = await limiter.getJob('1');
  const worker = new Worker({ limiter, handlers: { report: async (j) => j.payload } });
  const dispatcher = new Dispatcher({ limiter });
  void [worker, dispatcher, job];
  return decision.allowed ? 0 : decision.retryAfterMs;
}
export const isConfigError = (err: unknown): boolean => err instanceof ConfigError;
export type StoreClient = RedisStoreOptions['client'];
`;
const EXPRESS = `
import { bulkLimiter } from 'bulk-limiter/express';
import type { Request, RequestHandler } from 'express';
export const limit: RequestHandler = bulkLimiter({ limit: 10, windowMs: 1000, group: (req: Request) => req.get('x-api-key') });
`;
const KOA = `
import { bulkLimiter } from 'bulk-limiter/koa';
import type { Context, Middleware } from 'koa';
export const limit: Middleware = bulkLimiter({ limit: 10, windowMs: 1000, group: (ctx: Context) => ctx.get('x-api-key') });
`;
const FASTIFY = `
import Fastify from 'fastify';
import { bulkLimiter, dashboard, jobStatus } from 'bulk-limiter/fastify';
import { createLimiter } from 'bulk-limiter';
const limiter = createLimiter({ limit: 10, windowMs: 1000 });
const app = Fastify();
void app.register(bulkLimiter, { limiter, group: (request) => request.headers['x-api-key'] as string | undefined });
app.get('/', { config: { bulkLimiter: { cost: 2 } } }, async (request) => request.rateLimit?.remaining);
app.get('/jobs/:id', jobStatus({ limiter, public: true }));
void app.register(dashboard, { prefix: '/dashboard', limiters: [limiter] });
`;
const NEST = `
import { BulkLimit, BulkLimiterGuard, BulkLimiterModule, JobHandler, type NestRequest, type WorkerJob } from 'bulk-limiter/nest';
import type { DynamicModule } from '@nestjs/common';
export const module: DynamicModule = BulkLimiterModule.forRoot({ limit: 10, windowMs: 1000, group: (req: NestRequest) => req.ip, globalGuard: true });
export const route: MethodDecorator = BulkLimit({ cost: 2 });
export const handler: ClassDecorator = JobHandler('import');
export type Handle = (job: WorkerJob<{ rows: number }>) => Promise<unknown>;
export const guard: typeof BulkLimiterGuard = BulkLimiterGuard;
`;
// ioredis clients (Redis and Cluster) fit the RedisStore's structural client type.
const REDIS = `
import { Cluster, Redis } from 'ioredis';
import { RedisStore, createLimiter } from 'bulk-limiter';
export const limiter = createLimiter({ store: new RedisStore({ client: new Redis({ lazyConnect: true }) }), name: 'api', limit: 10, windowMs: 1000 });
export const clustered = new RedisStore({ client: new Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true }) });
`;

const MODES = {
  node10: { module: 'commonjs', moduleResolution: 'node10' },
  node16: { module: 'node16', moduleResolution: 'node16' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
};
type Mode = keyof typeof MODES;
// Each check costs seconds (skipLibCheck: false checks @types/node whole): the core project, which proves that
// the root entry needs no other types, runs in one mode; the full one, where the subpaths resolve, in all three.
const PROJECTS: Record<string, { packages: string[]; files: Record<string, string>; modes: Mode[] }> = {
  core: { packages: ['typescript', '@types/node'], files: { core: CORE }, modes: ['node16'] },
  full: {
    packages: ['typescript', '@types/node', '@types/express', '@types/koa', 'ioredis'],
    files: { core: CORE, express: EXPRESS, koa: KOA, redis: REDIS },
    modes: ['node10', 'node16', 'bundler'],
  },
  // the Fastify and Nest entry points with their frameworks' own types
  frameworks: {
    packages: ['typescript', '@types/node', 'fastify', '@nestjs/common', '@nestjs/core', 'reflect-metadata', 'rxjs'],
    files: { fastify: FASTIFY, nest: NEST },
    modes: ['node16'],
  },
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bl-consumer-'));
  const { tarball } = pack(dir);
  for (const [name, project] of Object.entries(PROJECTS)) {
    const at = join(dir, name);
    mkdirSync(at);
    writeFileSync(join(at, 'package.json'), JSON.stringify({ name: `consumer-${name}`, private: true }));
    execFileSync(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball, ...project.packages.map((p) => `${p}@${version(p)}`)],
      { cwd: at, stdio: 'ignore' },
    );
    // Each file as CJS (.ts) and as ESM (.mts): node16 resolves the package differently for each.
    for (const [file, text] of Object.entries(project.files)) for (const ext of ['ts', 'mts']) writeFileSync(join(at, `${file}.${ext}`), text);
    for (const mode of project.modes) {
      const options = MODES[mode];
      const compilerOptions = {
        ...options,
        target: 'es2022',
        lib: ['es2022'],
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        esModuleInterop: true,
      };
      writeFileSync(join(at, `tsconfig.${mode}.json`), JSON.stringify({ compilerOptions, include: ['*.ts', '*.mts'] }));
    }
  }
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cases = Object.entries(PROJECTS).flatMap(([name, project]) => project.modes.map((mode) => [name, mode] as const));

test.each(cases)('%s consumer type-checks under moduleResolution %s', (project, mode) => {
  const tsc = spawnSync(process.execPath, [join(dir, project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${mode}.json`], {
    cwd: join(dir, project),
    encoding: 'utf8',
  });
  expect(tsc.stdout + tsc.stderr).toBe('');
  expect(tsc.status).toBe(0);
});
