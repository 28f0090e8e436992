/**
 * The example servers as a newcomer runs them (`node examples/express/server.js`, `…/koa/server.js`,
 * `…/fastify/server.js`, `…/nest/server.js` on either Nest platform), on the
 * MemoryStore: limited routes answer with RateLimit headers, a flood gets 429 + Retry-After, other tenants
 * still pass, and an import is run (201) or, once the budget is spent, deferred (202 + Location to its job status).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../helpers/redis-server';
import { repoRoot } from './run-demo';

async function startServer(script: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<{ url: string; child: ChildProcess }> {
  if (!existsSync(join(repoRoot, 'dist', 'index.js'))) {
    throw new Error('dist/ is missing: the examples require the built package. Run `npm run build` first (npm ci does it).');
  }
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv, PORT: String(port) };
  delete env.REDIS_URL;
  const child = spawn(process.execPath, [script], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start within 10 s:\n${output}`)), 10_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`http://localhost:${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${String(code)}:\n${output}`));
    });
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

describe.each([
  ['Express', 'examples/express/server.js', {}],
  ['Koa', 'examples/koa/server.js', {}],
  ['Fastify', 'examples/fastify/server.js', {}],
  ['NestJS (platform-express)', 'examples/nest/server.js', {}],
  ['NestJS (platform-fastify)', 'examples/nest/server.js', { NEST_PLATFORM: 'fastify' }],
])('the %s example server', (_name, script, extraEnv) => {
  let server: { url: string; child: ChildProcess };
  beforeAll(async () => {
    server = await startServer(script, extraEnv);
  }, 15_000);
  afterAll(async () => {
    if (server) await stopServer(server.child);
  });

  it('limits per tenant with RateLimit headers, 429 + Retry-After for a flood, and lets other tenants through', async () => {
    const started = Date.now();
    const first = await fetch(`${server.url}/api/reports/1`, { headers: { 'x-tenant': 'acme' } });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toMatch(/r=\d+/);
    // Floods of 300 until one is refused: a slow machine spreads a flood over more windows (the limit refills),
    // so what holds everywhere is the strict bound: at most 100 admitted in each 1 s window of the run.
    const flood: Response[] = [];
    while (!flood.some((r) => r.status === 429) && flood.length < 3000) {
      flood.push(
        ...(await Promise.all(Array.from({ length: 300 }, () => fetch(`${server.url}/api/export`, { headers: { 'x-tenant': 'bulkbot' } })))),
      );
    }
    const admitted = 1 + flood.filter((r) => r.status === 200).length;
    expect(admitted).toBeLessThanOrEqual(100 * Math.ceil((Date.now() - started) / 1000));
    const denied = flood.find((r) => r.status === 429);
    expect(Number(denied?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(denied?.headers.get('content-type')).toContain('application/problem+json');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const other = await fetch(`${server.url}/api/reports/2`, { headers: { 'x-tenant': 'light-1' } });
    expect(other.status).toBe(200);
  });

  it('runs an import at once or defers it with 202 + Location to its job status', async () => {
    const answers = await Promise.all(
      Array.from({ length: 200 }, () =>
        fetch(`${server.url}/api/imports`, {
          method: 'POST',
          headers: { 'x-tenant': 'importer', 'content-type': 'application/json' },
          body: '{"rows":3}',
        }),
      ),
    );
    const statuses = new Set(answers.map((r) => r.status));
    expect(statuses.has(201)).toBe(true);
    const deferred = answers.find((r) => r.status === 202);
    expect(deferred).toBeDefined();
    const location = deferred?.headers.get('location') ?? '';
    expect(location).toMatch(/^\/jobs\//);
    const status = await fetch(`${server.url}${location}`, { headers: { 'x-tenant': 'importer' } });
    expect(status.status).toBe(200);
    // Job ids are guessable: another tenant is told the job does not exist.
    expect((await fetch(`${server.url}${location}`, { headers: { 'x-tenant': 'acme' } })).status).toBe(404);
    expect(((await status.json()) as { state: string }).state).toMatch(/^(delayed|pending|ready|active|completed)$/);
  });
});
