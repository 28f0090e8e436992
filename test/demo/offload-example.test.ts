/**
 * examples/offload.js as a newcomer runs it (MemoryStore): jobs enqueued without HTTP run, a cancelled one
 * does not, a permanent error goes to dead at once, and no tenant ever had more than its groupConcurrency
 * of reports running at once.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './run-demo';

test('examples/offload.js: enqueue, cancel, groupConcurrency, a permanent error', async () => {
  if (!existsSync(join(repoRoot, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.REDIS_URL;
  const { stdout } = await promisify(execFile)(process.execPath, [join(repoRoot, 'examples', 'offload.js')], { cwd: repoRoot, env, timeout: 30_000 });
  expect(stdout).toContain('enqueued 20 jobs; cancel a delayed one: true');
  expect(stdout).toContain('refused: ERR_BL_DEFER_HORIZON');
  expect(stdout).toContain('the bad job: dead; a report: {"rows":10}');
  expect(stdout).toContain('"completed":18,"dead":1');
  expect(stdout).toMatch(/most reports of one tenant running at once: [12] \(groupConcurrency 2/);
}, 40_000);
