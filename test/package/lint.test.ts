/** attw and publint on the packed package (scripts/lint-package.js; `npm run lint:package` runs the same). */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

test('attw and publint report nothing for the packed package', () => {
  const run = spawnSync(process.execPath, [join(__dirname, '..', '..', 'scripts', 'lint-package.js')], { encoding: 'utf8' });
  const output = run.stdout + run.stderr;
  expect(output).toContain('attw: no problems');
  expect(output).toContain('publint: no problems');
  expect(run.status).toBe(0);
}, 60_000);
