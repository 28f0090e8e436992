/**
 * Comments cite the design notes as `docs/algorithm.md §N` (or §N.M): every such citation names a section
 * that exists, and every file a comment names that way is in the repository. Every path the README, the pages
 * of docs/ and bench/README.md name exists (a file moved, its mentions follow).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { docFiles } from './readme-blocks';

const ROOT = join(__dirname, '..', '..');
const NOTES = readFileSync(join(ROOT, 'docs', 'algorithm.md'), 'utf8');
const SECTIONS = new Set([...NOTES.matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((m) => m[1]!));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'results') return [];
    if (statSync(path).isDirectory()) return files(path);
    return /\.(ts|js|lua|md)$/.test(name) && !name.endsWith('.generated.ts') ? [path] : [];
  });
}

test('the design notes number their sections', () => {
  expect([...SECTIONS]).toEqual(expect.arrayContaining(['1', '2', '2.1', '2.10', '3', '3.4', '4', '5', '6']));
});

test('every docs/algorithm.md citation names a section that exists', () => {
  const sources = ['src', 'lua', 'test', 'bench', 'examples'].flatMap((d) => files(join(ROOT, d)));
  sources.push(...docFiles().map((doc) => join(ROOT, doc)));
  const broken: string[] = [];
  let cited = 0;
  for (const file of sources) {
    for (const m of readFileSync(file, 'utf8').matchAll(/docs\/algorithm\.md((?: ?§\d+(?:\.\d+)?,?)+)/g)) {
      for (const s of m[1]!.matchAll(/§(\d+(?:\.\d+)?)/g)) {
        cited += 1;
        if (!SECTIONS.has(s[1]!)) broken.push(`${relative(ROOT, file)}: §${s[1]}`);
      }
    }
  }
  expect(broken).toEqual([]);
  expect(cited).toBeGreaterThan(5);
});

test('every repository path the README, the docs and bench/README.md name exists', () => {
  const named = [...docFiles(), 'bench/README.md'].flatMap((doc) =>
    [...readFileSync(join(ROOT, doc), 'utf8').matchAll(/\b(?:src|lua|test|docs|scripts|bench|examples)\/[\w./*-]*[\w*]/g)].map(
      (m) => `${doc}: ${m[0]}`,
    ),
  );
  // a glob (`lua/complete*.lua`) must match at least one file of its directory
  const exists = (path: string): boolean => {
    if (!path.includes('*')) return existsSync(join(ROOT, path));
    const dir = join(ROOT, dirname(path));
    const pattern = new RegExp(`^${basename(path).replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
    return existsSync(dir) && readdirSync(dir).some((name) => pattern.test(name));
  };
  expect(named.length).toBeGreaterThan(50);
  expect(named.filter((entry) => !exists(entry.slice(entry.indexOf(': ') + 2)))).toEqual([]);
});
