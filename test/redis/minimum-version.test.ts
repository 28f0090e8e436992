/**
 * The minimum Redis version is stated once, in the README's "Install" (docs/operations.md says why). This checks
 * that it is stated exactly once, that no page of docs/ and no comment in lua/ or src/ states another, and that the server the
 * Redis tests run on meets it (so every Redis test is evidence for the stated minimum or above; older servers
 * are not tested).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readRedisInfo } from '../../src/redis/redis-health';
import { startRedis, type RedisServer } from '../helpers/redis-server';

const ROOT = join(__dirname, '..', '..');
const STATEMENT = /Redis (\d+)\.(\d+) or later/g;
const CLAIM = /(?:Redis (\d+(?:\.\d+)*) or later|requires? Redis (\d+(?:\.\d+)*)|Redis (\d+(?:\.\d+)*)\+)/g;

function statedMinimum(): [number, number] {
  const found = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(STATEMENT)];
  expect(found.map((m) => m[0])).toHaveLength(1);
  return [Number(found[0]![1]), Number(found[0]![2])];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|lua)$/.test(name) && !name.endsWith('.generated.ts') ? [path] : [];
  });
}

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

test('the README states one minimum Redis version and no source comment states another', () => {
  const [major, minor] = statedMinimum();
  const others: string[] = [];
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name));
  for (const file of [...sourceFiles(join(ROOT, 'lua')), ...sourceFiles(join(ROOT, 'src')), ...pages]) {
    for (const m of readFileSync(file, 'utf8').matchAll(CLAIM)) {
      const version = m[1] ?? m[2] ?? m[3];
      if (version !== `${major}.${minor}`) others.push(`${file}: ${m[0]}`);
    }
  }
  expect(others).toEqual([]);
});

test('the Redis server the tests run on meets the stated minimum', async () => {
  const [major, minor] = statedMinimum();
  const { version } = await readRedisInfo(server.client());
  const [serverMajor, serverMinor] = version.split('.').map(Number);
  expect(serverMajor! * 1000 + serverMinor!).toBeGreaterThanOrEqual(major * 1000 + minor);
});
