/**
 * The README's ```js blocks as a test sees them: each with its line, the heading it sits under, and whether it
 * is a fragment (`// fragment` on its first line) or a complete program.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';

export const README_PATH = join(__dirname, '..', '..', 'README.md');

export interface ReadmeBlock {
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The nearest heading above the block. */
  readonly heading: string;
  readonly code: string;
  readonly fragment: boolean;
  /** `<heading> (README.md:<line>)`, for test names. */
  readonly name: string;
}

export function readmeBlocks(text = readFileSync(README_PATH, 'utf8')): ReadmeBlock[] {
  const lines = text.split('\n');
  const blocks: ReadmeBlock[] = [];
  let heading = '(top)';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '');
    if (line.trim() !== '```js') continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && (lines[i] ?? '').trim() !== '```'; i++) body.push(lines[i] ?? '');
    const code = body.join('\n');
    blocks.push({
      line: start + 1,
      heading,
      code,
      fragment: /^\/\/ fragment\b/.test(body[0] ?? ''),
      name: `${heading} (README.md:${start + 1})`,
    });
  }
  return blocks;
}

/**
 * Compiles (never runs) a block as Node runs a CommonJS file: inside the module wrapper, so `const exports`
 * or a top-level `await` is the SyntaxError it is for a user. Fragments get an async wrapper (they may await).
 */
export function parseBlock(block: ReadmeBlock): void {
  const wrapper = block.fragment ? 'async function' : 'function';
  new Script(`(${wrapper} (exports, require, module, __filename, __dirname) {\n${block.code}\n})`, { filename: `README.md:${block.line}` });
}
