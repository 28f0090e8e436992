#!/usr/bin/env node
/**
 * docs/performance.md from one `npm run bench`: the run's bench/results/summary.md (its date, machine, targets and
 * sections) laid out once, prose wrapped at 120 characters (docs/ pages' width), charts linked in bench/results/.
 * "What this run says" is written by hand: it is kept from the page as it is (edit it after regenerating).
 *
 *   npm run bench && node scripts/performance-page.js [--commit=<sha of the commit holding the results>]
 */
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const PAGE = join(ROOT, 'docs', 'performance.md');
const WIDTH = 120;
const commit = process.argv.find((a) => a.startsWith('--commit='))?.slice(9);

const summary = readFileSync(join(ROOT, 'bench', 'results', 'summary.md'), 'utf8');
const measured = /^Measured (\d{4}-\d\d-\d\d \d\d:\d\d) UTC (?:\(smoke[^)]*\) )?on ([^;]+); (.*)$/m.exec(summary);
if (!measured) throw new Error('performance-page: bench/results/summary.md has no "Measured … UTC on …" line');
if (summary.includes('(smoke run')) throw new Error('performance-page: the results are a smoke run');
const [, when, machine, rest] = measured;

/** summary.md's `### ` sections, by title, in order. */
const sections = summary
  .split(/^### /m)
  .slice(1)
  .map((part) => {
    const newline = part.indexOf('\n');
    return { title: part.slice(0, newline).trim(), body: part.slice(newline + 1).trim() };
  });
const targets = sections.find((s) => s.title === 'Targets');
if (!targets) throw new Error('performance-page: no Targets section in summary.md');

/** The hand-written notes of the page as it is. */
const current = readFileSync(PAGE, 'utf8');
const notesAt = current.indexOf('## What this run says\n');
const notes = notesAt < 0 ? 'To be written for this run.' : current.slice(notesAt + 22, current.indexOf('\n## ', notesAt + 22)).trim();

/** Words of one paragraph (or list item) into lines of at most WIDTH characters; `indent` continues a list item. */
function wrap(text, indent = '') {
  const lines = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const next = line === '' ? word : `${line} ${word}`;
    if (next.length > WIDTH && line !== '') {
      lines.push(line);
      line = indent + word;
    } else line = next;
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}

/** Prose wrapped; tables, images, headings and code kept as they are. */
function layout(body) {
  return body
    .split(/\n{2,}/)
    .map((block) => {
      if (/^(\||!\[|#|```|<)/.test(block)) return block;
      if (block.startsWith('- '))
        return block
          .split(/\n(?=- )/)
          .map((item) => wrap(item, '  '))
          .join('\n');
      return wrap(block);
    })
    .join('\n\n')
    .replace(/\(https:\/\/raw\.githubusercontent\.com\/bulk-limiter\/bulk-limiter\/main\/bench\/results\//g, '(../bench/results/');
}

const anchor = (title) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');
/** A section's title in the contents: without its parenthesis or its subtitle. */
const short = (title) => title.replace(/ \(.*\)$/, '').replace(/:.*$/, '');
const parts = sections.filter((s) => s.title !== 'Targets');
const page = [
  '# Performance',
  wrap(
    `Every figure on this page comes from one run of \`npm run bench\` (\`bench/run.js\`), the run of **${when} UTC**: its output is \`bench/results/summary.md\` and the section files beside it${commit ? `, committed in ${commit}` : ''}. The page is made from them by \`scripts/performance-page.js\`; only "What this run says" is written by hand.`,
  ),
  wrap(`Measured ${when} UTC on ${machine}; ${rest}`),
  wrap(
    'How to run the benchmark and what each section measures: `bench/README.md`. How fairness is measured: [algorithm.md §5](algorithm.md#5-how-fairness-is-measured). What the numbers mean when you run bulk-limiter on Redis: [operations.md, Speed on Redis](operations.md#speed-on-redis).',
  ),
  `Contents:\n\n- [Targets](#targets) and [what this run says](#what-this-run-says)\n${parts.map((s) => `- [${short(s.title)}](#${anchor(s.title)})`).join('\n')}`,
  `## Targets\n\n${targets.body}`,
  `## What this run says\n\n${notes}`,
  ...parts.map((s) => `## ${s.title}\n\n${layout(s.body)}`),
].join('\n\n');
writeFileSync(PAGE, `${page}\n`);
console.log(`performance-page: docs/performance.md from the run of ${when} UTC (${parts.length} sections)`);
