/**
 * Every code block of the README and of docs/*.md is valid as written. `js` blocks (and `ts` ones, as tsc emits
 * them: readme-blocks.ts) compile as the CommonJS
 * files a user would paste them into (fragments, marked `// fragment`, inside an async function), and the
 * complete ones run, each as its own node process in an empty temp directory where `bulk-limiter` is this
 * repository's built package, against a real redis-server (`REDIS_URL`). The convention (docs/development.md):
 * a block ends by itself with exit code 0, or it is a server that listens on `PORT` (the runner sets 0) and
 * prints its `http://localhost:<port>` URL; the runner then sends it one GET as a tenant (any answer below 500)
 * and SIGTERM, and the process must end. Any `WRN_BL_` warning in a block's output fails it too: the docs'
 * setups must not log false alarms. `sh` blocks name only npm scripts that exist; `text` blocks are output.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Redis from 'ioredis';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { allBlocks, blocksOf, parseBlock, ROOT as root } from './readme-blocks';

const RUN_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;
/** The runner's GET comes from a tenant, as the examples' clients do (they name it in one of these headers). */
const CLIENT_HEADERS = { 'x-api-key': 'readme-client', 'x-tenant': 'readme-client' };
const blocks = allBlocks();
const js = blocks.filter((b) => b.lang === 'js' || b.lang === 'ts');
const complete = js.filter((b) => !b.fragment);

let server: RedisServer;
let redis: Redis;
let dir: string;
beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does).');
  server = await startRedis();
  redis = server.client();
  dir = mkdtempSync(join(tmpdir(), 'bl-readme-'));
  // `bulk-limiter` resolves to this repository through its package.json `exports`, as an installed package;
  // express, koa, ioredis and prom-client from the repository's node_modules (NODE_PATH).
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(root, join(dir, 'node_modules', 'bulk-limiter'), 'dir');
});
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await server?.stop();
});

test('the README and docs/ have complete examples to run, and fragments are marked', () => {
  expect(complete.filter((b) => b.file === 'README.md').length).toBeGreaterThanOrEqual(6);
  expect(complete.filter((b) => b.file.startsWith('docs/')).length).toBeGreaterThanOrEqual(6);
  expect(js.filter((b) => b.fragment).length).toBeGreaterThanOrEqual(1);
});

test('every code block is js or ts (compiled, and run when complete), sh (npm scripts) or text (output)', () => {
  expect(blocks.filter((b) => !['js', 'ts', 'sh', 'text'].includes(b.lang)).map((b) => `${b.name}: \`${b.lang}\``)).toEqual([]);
});

test('every npm script an sh block runs is one of package.json', () => {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const named = blocks.filter((b) => b.lang === 'sh').flatMap((b) => [...b.code.matchAll(/\bnpm run ([\w:-]+)/g)].map((m) => [b.name, m[1]!]));
  expect(named.length).toBeGreaterThanOrEqual(3);
  expect(named.filter(([, script]) => scripts[script!] === undefined)).toEqual([]);
});

test("the README's 'Try it' starts from a clone: the demo on the embedded store and the tests, two commands", () => {
  const tryIt = blocksOf('README.md').find((b) => b.heading === 'Try it' && b.lang === 'sh');
  const commands = (tryIt?.code ?? '').split('\n').map((l) => l.replace(/#.*/, '').trim());
  expect(commands).toEqual(['git clone https://github.com/bulk-limiter/bulk-limiter.git', 'cd bulk-limiter', 'npm ci && npm run demo', 'npm test']);
});

test.each(js.map((b) => [b.name, b] as const))('%s compiles as written', (_name, block) => {
  expect(() => parseBlock(block)).not.toThrow();
});

interface RunResult {
  readonly output: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The URL a server block printed (it was then sent a GET and SIGTERM). */
  readonly url?: string;
  readonly status?: number;
}

function run(file: string): Promise<RunResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_PATH: join(root, 'node_modules'), PORT: '0', REDIS_URL: server.url };
  const child = spawn(process.execPath, [file], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let url: string | undefined;
  let status: number | undefined;
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      child.kill('SIGKILL');
      reject(new Error(`${why}\n--- output ---\n${output}`));
    };
    let timer = setTimeout(() => fail(`did not end (or print its URL) within ${RUN_TIMEOUT_MS} ms`), RUN_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const found = url === undefined ? /http:\/\/localhost:(\d+)/.exec(output) : null;
      if (!found) return;
      url = `http://127.0.0.1:${found[1]}/`;
      clearTimeout(timer);
      timer = setTimeout(() => fail(`did not end within ${STOP_TIMEOUT_MS} ms of SIGTERM`), STOP_TIMEOUT_MS + 5_000);
      fetch(url, { headers: CLIENT_HEADERS })
        .then(
          (res) => {
            status = res.status;
          },
          (error: unknown) => {
            output += `\n(runner) GET ${url} failed: ${String(error)}`;
          },
        )
        .finally(() => child.kill('SIGTERM'));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', (error) => fail(String(error)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ output, code, signal, url, status });
    });
  });
}

test.each(complete.map((b) => [b.name, b] as const))(
  '%s runs',
  async (_name, block) => {
    const file = join(dir, `${block.file.replace(/\W/g, '-')}-${block.line}.js`);
    writeFileSync(file, `${block.code}\n`);
    const onRedis = block.code.includes('REDIS_URL');
    if (onRedis && server.pid !== undefined) await redis.flushdb(); // our own server: start each Redis block empty
    const result = await run(file);
    const report = `${block.name} ended with code ${String(result.code)}, signal ${String(result.signal)}\n--- output ---\n${result.output}`;
    if (result.url !== undefined) {
      expect({ status: result.status !== undefined && result.status < 500, report }).toEqual({ status: true, report });
      expect({ ended: result.code === 0 || result.signal === 'SIGTERM', report }).toEqual({ ended: true, report });
    } else {
      expect({ code: result.code, report }).toEqual({ code: 0, report });
    }
    expect(result.output).not.toMatch(/WRN_BL_/);
    // A block on Redis decided there (an unreachable Redis would have left its state in-process).
    if (onRedis) expect(await redis.dbsize()).toBeGreaterThan(0);
  },
  RUN_TIMEOUT_MS + STOP_TIMEOUT_MS + 10_000,
);
