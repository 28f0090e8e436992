/**
 * Links between the README and the pages of docs/ resolve. The README is also the npm registry's page, which
 * cannot resolve repository paths: its links into the repository are absolute GitHub URLs
 * (`https://github.com/bulk-limiter/bulk-limiter/blob/main/<path>#<anchor>`). The pages of docs/ are read on
 * GitHub and may link relatively. Either way, the file must exist and the anchor must be a heading of it (or
 * an `<a id>`). Also: the README leads to every page, and its lines stay readable.
 */
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { docFiles, readDoc, ROOT } from './readme-blocks';

const BLOB = 'https://github.com/bulk-limiter/bulk-limiter/blob/main/';
const RAW = 'https://raw.githubusercontent.com/bulk-limiter/bulk-limiter/main/';

/** GitHub's heading anchors (lower case, punctuation dropped, spaces to '-') and explicit `<a id="…">`s. */
function anchorsOf(text: string): Set<string> {
  const headings = [...text.matchAll(/^#+ (.+)$/gm)].map((m) =>
    m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-'),
  );
  return new Set([...headings, ...[...text.matchAll(/<a id="([^"]+)">/g)].map((m) => m[1]!)]);
}

/** The Markdown text outside code blocks and code spans: where links are links. */
const prose = (text: string): string => text.replace(/^( *)(`{3,})[^`\n]*\n[\s\S]*?\n\1\2`*$/gm, '').replace(/(`+)[^`]*?\1/g, '');

/** Every link target of a doc, images included: `[text](target)`, across line breaks in the text. */
const linksOf = (file: string): string[] => [...prose(readDoc(file)).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);

/** Where a link of `file` points in the repository: a path from the root and an anchor; undefined if outside. */
function target(file: string, url: string): { path: string; anchor: string | undefined } | undefined {
  const [base, anchor] = url.split('#') as [string, string | undefined];
  if (base === '') return { path: file, anchor };
  for (const prefix of [BLOB, RAW]) if (base.startsWith(prefix)) return { path: base.slice(prefix.length), anchor };
  if (/^[a-z]+:/.test(base)) return undefined; // another site
  return { path: normalize(join(dirname(file), base)), anchor };
}

const broken = (file: string): string[] =>
  linksOf(file).filter((url) => {
    const to = target(file, url);
    if (to === undefined) return false;
    if (to.path.startsWith('..') || !existsSync(join(ROOT, to.path))) return true;
    return to.anchor !== undefined && !(to.path.endsWith('.md') && anchorsOf(readDoc(to.path)).has(to.anchor));
  });

test.each(docFiles())('every link of %s resolves: the file exists, and the anchor is one of its headings', (file) => {
  expect(linksOf(file).length).toBeGreaterThan(0);
  expect(broken(file)).toEqual([]);
});

test('the README links into the repository only by absolute URL (the registry page resolves no other)', () => {
  const links = linksOf('README.md').filter((url) => !url.startsWith('#'));
  expect(links.filter((url) => !url.startsWith('https://'))).toEqual([]);
});

test('the README leads to every page of docs/', () => {
  const linked = new Set(linksOf('README.md').map((url) => target('README.md', url)?.path));
  const pages = docFiles().filter((f) => f.startsWith('docs/'));
  expect(pages).toEqual(expect.arrayContaining(['docs/guide.md', 'docs/reference.md', 'docs/operations.md', 'docs/performance.md']));
  expect(pages.filter((page) => !linked.has(page))).toEqual([]);
});

test('the checker finds what it looks for: a missing file, a missing anchor, a relative README link', () => {
  expect(target('docs/guide.md', 'reference.md#events')).toEqual({ path: 'docs/reference.md', anchor: 'events' });
  expect(target('README.md', `${BLOB}docs/guide.md#rules`)).toEqual({ path: 'docs/guide.md', anchor: 'rules' });
  expect(anchorsOf('## The `\'local\'` fallback\n<a id="a-202-is-a-promise"></a>')).toEqual(new Set(['the-local-fallback', 'a-202-is-a-promise']));
  expect(linksOf('README.md')).toContain(`${BLOB}docs/algorithm.md`);
  expect(prose('a `[x](nowhere.md)` b\n```js\n[y](gone.md)\n```\n[z](here.md)')).not.toMatch(/nowhere|gone/);
  expect(prose('```js\nconst a = `x`;\n```\n[z](here.md)\n```sh\nls\n```\n')).toContain('[z](here.md)');
});

test('README lines stay under 300 characters; the pages of docs/ wrap their prose at about 120', () => {
  /** Lines over `max`; with `proseOnly`, not table rows or code (neither can wrap). */
  const long = (file: string, max: number, proseOnly: boolean): string[] => {
    let inCode = false;
    return readDoc(file)
      .split('\n')
      .flatMap((line, i) => {
        const fence = /^ *```/.test(line);
        if (fence) inCode = !inCode;
        const exempt = proseOnly && (fence || inCode || line.trimStart().startsWith('|'));
        return line.length > max && !exempt ? [`${file}:${i + 1} (${line.length})`] : [];
      });
  };
  expect(long('README.md', 300, false)).toEqual([]);
  // algorithm.md is the design notes, wrapped by their own author.
  const pages = docFiles().filter((f) => f.startsWith('docs/') && f !== 'docs/algorithm.md');
  expect(pages.flatMap((page) => long(page, 120, true))).toEqual([]);
});
