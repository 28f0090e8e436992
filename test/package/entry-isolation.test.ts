/**
 * Each entry point loads only what it needs: a user who imports `bulk-limiter/express` loads nothing of Koa,
 * Fastify or Nest (their packages are optional peers), and so on. Checked in a fresh process through require.cache.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** The packages under node_modules that requiring `entry` loads. */
function packagesLoadedBy(entry: string): string[] {
  const out = execFileSync(
    process.execPath,
    [
      '-e',
      `require(${JSON.stringify(entry)});
      const names = new Set();
      for (const file of Object.keys(require.cache)) {
        const m = /node_modules[\\\\/]((?:@[^\\\\/]+[\\\\/])?[^\\\\/]+)/.exec(file.slice(${JSON.stringify(root)}.length));
        if (m) names.add(m[1].replace('\\\\', '/'));
      }
      console.log(JSON.stringify([...names].sort()));`,
    ],
    { cwd: root, encoding: 'utf8' },
  );
  return JSON.parse(out) as string[];
}

const FRAMEWORKS = ['express', 'koa', 'fastify', 'avvio', '@fastify', '@nestjs', 'reflect-metadata', 'rxjs'];
const frameworksIn = (names: string[]) => names.filter((n) => FRAMEWORKS.some((f) => n === f || n.startsWith(`${f}/`)));

test.each([
  ['bulk-limiter', []],
  ['bulk-limiter/express', []],
  ['bulk-limiter/koa', []],
  ['bulk-limiter/fastify', []],
  ['bulk-limiter/nest', ['@nestjs/common', '@nestjs/core', 'reflect-metadata', 'rxjs']],
])('%s loads of the frameworks only %j', (entry, expected) => {
  expect(frameworksIn(packagesLoadedBy(entry))).toEqual(expected);
});
