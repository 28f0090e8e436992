/**
 * The README and the pages of docs/ as the tests see them: their code blocks (each with its file, line,
 * language, the heading it sits under, and whether a `js` block is a fragment, `// fragment` on its first
 * line, or a complete program), and their text.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import ts from 'typescript';

export const ROOT = join(__dirname, '..', '..');
export const README_PATH = join(ROOT, 'README.md');

/** README.md and every docs/*.md, as paths from the repository root. */
export function docFiles(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages];
}

/** A doc's text, by path from the repository root. */
export const readDoc = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

export interface DocBlock {
  /** Path from the repository root, e.g. `docs/guide.md`. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's info string: `js`, `ts` (its code transpiled), `sh`, `text`, or '' when it has none. */
  readonly lang: string;
  /** The nearest heading above the block. */
  readonly heading: string;
  readonly code: string;
  readonly fragment: boolean;
  /** `<heading> (<file>:<line>)`, for test names. */
  readonly name: string;
}

/**
 * Every fenced block of one Markdown text, indented ones (inside list items) too. As in CommonMark, a fence
 * is three or more backticks at the start of a line (after indentation) whose info string has no backtick,
 * and it ends at a line of at least as many backticks.
 */
export function blocksOf(file: string, text = readDoc(file)): DocBlock[] {
  const lines = text.split('\n');
  const blocks: DocBlock[] = [];
  let heading = '(top)';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '');
    const open = /^( *)(`{3,})([^`]*)$/.exec(line);
    if (!open) continue;
    const [, indent = '', fence = '```', info = ''] = open;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !new RegExp(`^ *${fence}\`* *$`).test(lines[i] ?? ''); i++) {
      const content = lines[i] ?? '';
      body.push(content.startsWith(indent) ? content.slice(indent.length) : content.trimStart());
    }
    const lang = info.trim().split(/\s+/)[0] ?? '';
    const code = body.join('\n');
    blocks.push({
      file,
      line: start + 1,
      lang,
      heading,
      code: lang === 'ts' ? asCommonJs(code) : code,
      fragment: (lang === 'js' || lang === 'ts') && /^\/\/ fragment\b/.test(body[0] ?? ''),
      name: `${heading} (${file}:${start + 1})`,
    });
  }
  return blocks;
}

/**
 * A `ts` block as tsc emits it for a Nest user: CommonJS, legacy decorators and their metadata. It then
 * compiles and runs as a `js` block does (the Nest quick start is the TypeScript a Nest user writes).
 */
function asCommonJs(source: string): string {
  const compilerOptions: ts.CompilerOptions = {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
  };
  return ts.transpileModule(source, { compilerOptions }).outputText;
}

/** Every block of the README and of every docs/*.md. */
export const allBlocks = (): DocBlock[] => docFiles().flatMap((file) => blocksOf(file));

/**
 * Compiles (never runs) a block as Node runs a CommonJS file: inside the module wrapper, so `const exports`
 * or a top-level `await` is the SyntaxError it is for a user. Fragments get an async wrapper (they may await).
 */
export function parseBlock(block: DocBlock): void {
  const wrapper = block.fragment ? 'async function' : 'function';
  new Script(`(${wrapper} (exports, require, module, __filename, __dirname) {\n${block.code}\n})`, { filename: `${block.file}:${block.line}` });
}

/** Markdown prose with its line breaks joined, so a phrase is found wherever the text wraps. */
export const joined = (text: string): string => text.replace(/\n[ \t]*(?=\S)/g, ' ');
