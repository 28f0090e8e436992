/**
 * The reference tables against what the code accepts and returns, wherever they live: the option tables
 * (docs/reference.md; names as the entry points know them), the Decision fields, the 202 body, getJob and job
 * status fields and the events (in any doc). The error codes: ./error-codes.test.ts.
 */
import express from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import * as onExpress from '../../src/middleware/express';
import { DISPATCHER_OPTION_NAMES } from '../../src/queue/dispatcher';
import { WORKER_OPTION_NAMES } from '../../src/queue/worker-options';
import { LIMITER_OPTION_NAMES } from '../../src/limiter/options';
import { DEFER_OPTION_NAMES } from '../../src/queue/defer-input';
import { Dispatcher } from '../../src/queue/dispatcher';
import { PermanentError } from '../../src/queue/permanent-error';
import { Worker } from '../../src/queue/worker';
import { MemoryStore } from '../../src/memory/memory-store';
import type { Decision } from '../../src/types';
import { docFiles, readDoc } from './readme-blocks';
import { knownOptions } from '../helpers/known-options';

const root = join(__dirname, '..', '..');
const reference = readDoc('docs/reference.md');
const guide = readDoc('docs/guide.md');
/** README.md and every docs/*.md, one after the other. */
const allDocs = docFiles().map(readDoc).join('\n');
const sorted = (names: Iterable<string>): string[] => [...new Set(names)].sort();

/** The first column of the first table after the line of `doc` that contains `marker`. */
function tableAfter(marker: string, doc = reference): string[] {
  const lines = doc.split('\n');
  let i = lines.findIndex((l) => l.includes(marker));
  if (i < 0) throw new Error(`no line with ${marker}`);
  while (i < lines.length && !lines[i]!.startsWith('|')) i++;
  const names: string[] = [];
  for (i += 2; i < lines.length && lines[i]!.startsWith('|'); i++) names.push(/^\| `([^`]+)`/.exec(lines[i]!)?.[1] ?? lines[i]!);
  return names;
}

/** The names in the first `{ a, b?, c }` after `marker` in `doc` (line breaks joined). */
function braceAfter(marker: string, doc: string): string[] {
  const text = doc.replace(/\n[ \t]*/g, ' ');
  const rest = text.includes(marker) ? text.slice(text.indexOf(marker) + marker.length) : '';
  const inner = /`\{ ([^}]+) \}`/.exec(rest)?.[1];
  if (inner === undefined) throw new Error(`no { … } after ${marker}`);
  return inner.split(',').map((s) => s.trim().replace(/\?$/, ''));
}

describe('option tables', () => {
  const middlewareKnown = knownOptions(() => onExpress.bulkLimiter({ bogus: 1 } as never));
  it('limiter and deferral options', () => {
    expect(sorted(tableAfter('`createLimiter(options)`, or the same options inline'))).toEqual(sorted(LIMITER_OPTION_NAMES));
    expect(sorted(tableAfter('## Deferral options'))).toEqual(sorted(DEFER_OPTION_NAMES));
  });
  it('middleware and its defer options', () => {
    const ownNames = middlewareKnown.filter((n) => !LIMITER_OPTION_NAMES.includes(n) && !DEFER_OPTION_NAMES.includes(n));
    expect(sorted(tableAfter('## Middleware options'))).toEqual(sorted(ownNames));
    const deferKnown = knownOptions(() => onExpress.bulkLimiter({ limit: 10, defer: { type: 't', statusUrl: String, bogus: 1 } } as never));
    expect(sorted(tableAfter('## Middleware `defer` options'))).toEqual(sorted(deferKnown));
  });
  it('jobStatus, Dispatcher and Worker', () => {
    const limiter = createLimiter({ limit: 10 });
    expect(sorted(tableAfter('`jobStatus({ limiter, group })` answers'))).toEqual(
      sorted(knownOptions(() => onExpress.jobStatus({ limiter, public: true, bogus: 1 } as never))),
    );
    expect(sorted(tableAfter('`new Dispatcher({ limiter, ... })`'))).toEqual(sorted(DISPATCHER_OPTION_NAMES));
    expect(sorted(tableAfter('`new Worker({ limiter, handlers, ... })`'))).toEqual(sorted(WORKER_OPTION_NAMES));
  });
});

describe('events', () => {
  /** The keys of `export interface <name> {…}` in a source file: the typed listener map users see. */
  const eventsOf = (file: string, name: string): string[] => {
    const text = readFileSync(join(root, 'src', file), 'utf8');
    const body = new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`).exec(text)?.[1] ?? '';
    return [...body.matchAll(/^ {2}(\w+):/gm)].map((m) => m[1]!);
  };
  /** The quoted event names of the paragraph that starts with `prefix` (in any doc). */
  const quotedOnLine = (prefix: string): string[] => {
    const start = allDocs.indexOf(`\n${prefix}`);
    const paragraph = start < 0 ? '' : allDocs.slice(start, allDocs.indexOf('\n\n', start + 1));
    return [...paragraph.matchAll(/`'(\w+)'`/g)].map((m) => m[1]!);
  };
  it.each([
    ['Dispatcher events:', 'queue/dispatcher.ts', 'DispatcherEvents'],
    ['Worker events:', 'queue/worker.ts', 'WorkerEvents'],
  ])('%s as in %s', (prefix, file, name) => {
    expect(sorted(quotedOnLine(prefix))).toEqual(sorted(eventsOf(file, name)));
  });
  it("the limiter's", () => {
    expect(sorted([...allDocs.matchAll(/limiter\.on\('(\w+)'/g)].map((m) => m[1]!))).toEqual(
      sorted(eventsOf('limiter/limiter-api.ts', 'LimiterEvents')),
    );
  });
});

describe('what the code returns', () => {
  let limiter: Limiter;
  beforeEach(() => {
    limiter = createLimiter({ store: new MemoryStore(), name: 'reference', limit: 2, windowMs: 60_000 });
  });
  afterEach(() => limiter.close());

  it('Decision fields: allowed, denied and deferred', async () => {
    const keys = new Set<string>();
    const decisions: Decision[] = [];
    for (let i = 0; i < 6; i++) decisions.push(await limiter.check('a', i < 4 ? {} : { defer: { type: 't' } }));
    const ruled = createLimiter({ store: new MemoryStore(), name: 'reference-rules', limit: 100, rules: [{ name: 'r', limit: 1, windowMs: 1000 }] });
    for (let i = 0; i < 2; i++) decisions.push(await ruled.check('a'));
    await ruled.close();
    const capped = createLimiter({ store: new MemoryStore(), name: 'reference-concurrency', limit: 100, concurrency: 1 });
    for (let i = 0; i < 2; i++) decisions.push(await capped.check('a'));
    await capped.close();
    const classed = createLimiter({ store: new MemoryStore(), name: 'reference-classes', limit: 100, classes: { critical: { share: 0.2 } } });
    decisions.push(await classed.check('a', { class: 'critical' }));
    await classed.close();
    decisions.forEach((d) => Object.keys(d).forEach((k) => keys.add(k)));
    expect(decisions.some((d) => d.allowed) && decisions.some((d) => d.reason === 'limit') && decisions.some((d) => d.job)).toBe(true);
    expect(sorted(tableAfter('`check()` returns a `Decision`'))).toEqual(sorted(keys));
  });

  it('the 202 body', async () => {
    const app = express();
    app.post('/imports', onExpress.bulkLimiter({ limiter, defer: { type: 'import', statusUrl: (id) => `/jobs/${id}` } }), (_req, res) =>
      res.sendStatus(201),
    );
    let body: Record<string, unknown> | undefined;
    for (let i = 0; i < 5 && body === undefined; i++) {
      const res = await request(app).post('/imports');
      if (res.status === 202) body = res.body as Record<string, unknown>;
    }
    expect(sorted(braceAfter('- **Deferred request:**', guide))).toEqual(sorted(Object.keys(body ?? {})));
    expect(body).toMatchObject({ state: 'delayed', duplicate: false, runAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) });
  });

  it('getJob and job status fields, of a completed and a dead job', async () => {
    const ok = await limiter.enqueue('t1', { type: 'report', payload: { n: 1 } });
    const bad = await limiter.enqueue('t1', { type: 'report', payload: { n: -1 } });
    const dispatcher = new Dispatcher({ limiter, pollMs: 20 }).start();
    const worker = new Worker({
      limiter,
      handlers: {
        report: async (job) => {
          if ((job.payload as { n: number }).n < 0) throw new PermanentError('no');
          return { rows: 1 };
        },
      },
    }).start();
    const finished = async (id: string) => {
      for (let i = 0; i < 500; i++) {
        const state = (await limiter.getJob(id))?.state;
        if (state === 'completed' || state === 'dead') return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`job ${id} did not finish`);
    };
    try {
      await finished(ok.id);
      await finished(bad.id);
    } finally {
      await worker.close();
      await dispatcher.stop();
    }
    const jobKeys = new Set<string>();
    for (const id of [ok.id, bad.id]) Object.keys((await limiter.getJob(id)) ?? {}).forEach((k) => jobKeys.add(k));
    expect(sorted(braceAfter('- **Job API:** `limiter.getJob(id)`', guide))).toEqual(sorted(jobKeys));
    expect(typeof (await limiter.getJob(ok.id))?.createdAt).toBe('number'); // ms on the store clock

    const app = express();
    app.get('/jobs/:id', onExpress.jobStatus({ limiter, group: (req) => req.get('x-tenant') }));
    const statusKeys = new Set<string>();
    for (const id of [ok.id, bad.id]) {
      const res = await request(app).get(`/jobs/${id}`).set('x-tenant', 't1');
      expect(res.status).toBe(200);
      Object.keys(res.body as object).forEach((k) => statusKeys.add(k));
      expect((res.body as { createdAt: unknown }).createdAt).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/); // ISO 8601
    }
    expect(sorted(braceAfter('`jobStatus({ limiter, group })` answers `GET …/:id` with', reference))).toEqual(sorted(statusKeys));
  });
});
