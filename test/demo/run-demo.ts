/** Runs `examples/demo.js` as a child process in short mode and reads back what it wrote. */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(__dirname, '..', '..');

export interface TenantRow {
  name: string;
  weight: number;
  sent: number;
  admitted: number;
  deferred: number;
  rejected: number;
  errors: number;
  completed: number;
  servedPerS: number;
  fairPerS: number;
  /** served / fair, null when not judged (fair share 0, or too few requests). */
  vsFair: number | null;
  /** When the tenant's last deferred job finished, ms after the load; null when it deferred nothing. */
  jobsDrainedMs: number | null;
}

export interface SystemSummary {
  key: string;
  title: string;
  deferring: boolean;
  tenants: TenantRow[];
  totals: Pick<TenantRow, 'sent' | 'admitted' | 'deferred' | 'rejected' | 'errors' | 'completed'>;
  maxInWindow: number;
  maxIn100Ms: number;
  utilisation: number;
  drainMs: number | null;
}

export interface DemoSummary {
  limit: number;
  windowMs: number;
  burst: number;
  /** What the strict limit admits per second: (limit − burst + 1) per window. */
  capacityPerS: number;
  durationMs: number;
  storeKind: string;
  tenants: { name: string; weight: number }[];
  systems: { ours: SystemSummary; baseline: SystemSummary };
}

export interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
  summary: DemoSummary;
  reportPath: string;
}

export function runDemo(args: string[], env: NodeJS.ProcessEnv = {}): Promise<DemoRun> {
  if (!existsSync(join(repoRoot, 'dist', 'index.js'))) {
    throw new Error('dist/ is missing: the demo requires the built package. Run `npm run build` first (npm ci does it).');
  }
  const dir = mkdtempSync(join(tmpdir(), 'bl-demo-test-'));
  const jsonPath = join(dir, 'summary.json');
  const reportPath = join(dir, 'report.html');
  const started = Date.now();
  const childEnv = { ...process.env, ...env };
  if (!('REDIS_URL' in env)) delete childEnv.REDIS_URL;
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      ['examples/demo.js', ...args, '--plain', '--json', jsonPath, '--out', reportPath],
      { cwd: repoRoot, env: childEnv, timeout: 55_000, maxBuffer: 8 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        if (code !== 0) {
          reject(new Error(`demo exited with ${String(error?.code ?? error?.signal)}\n${stdout}\n${stderr}`));
          return;
        }
        const summary = JSON.parse(readFileSync(jsonPath, 'utf8')) as DemoSummary;
        resolvePromise({ code, stdout, stderr, elapsedMs: Date.now() - started, summary, reportPath });
      },
    );
  });
}
