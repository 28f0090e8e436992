/**
 * The demo's report on a synthetic run (no servers, no browser): the same numbers get the same colours in both
 * systems, a limit line is drawn only on charts whose buckets are the limit's window, fair shares are split from
 * the strict capacity, deferred work is shown by tenant; and the dashboard URL is printed only when it answers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLimiter } from '../../src';
import { Recorder, formatSummary, probeDashboard, renderReport, strictCapacityPerS, summarize, type DemoSystem, type DemoTenant } from './report-api';

const TENANTS: DemoTenant[] = [
  { name: 'flood', weight: 1, route: 'export', rate: 150, role: 'floods' },
  { name: 'paying', weight: 3, route: 'reports', rate: 40, role: 'pays' },
  { name: 'importer', weight: 1, route: 'imports', rate: 10, role: 'imports' },
];
const SPEC = { limit: 60, windowMs: 1000, burst: 6, sustained: false };
const DURATION_MS = 2000;

/** One system's run: every tenant sends at its rate; a few are admitted, the importer's excess deferred. */
function playedSystem(key: DemoSystem['key']): DemoSystem {
  const recorder = new Recorder({ tenants: TENANTS, startMs: 0 });
  for (const t of TENANTS) {
    const sent = (t.rate * DURATION_MS) / 1000;
    for (let i = 0; i < sent; i++) {
      const at = (i * DURATION_MS) / sent;
      recorder.count('sent', t.name, at);
      const admitted = i % (t.name === 'flood' ? 10 : 2) === 0;
      const outcome = admitted ? 'admitted' : t.name === 'importer' ? 'deferred' : 'rejected';
      recorder.count(outcome, t.name, at);
      if (admitted) recorder.work({ tenant: t.name, at });
      if (outcome === 'deferred') {
        recorder.work({ tenant: t.name, at: at + 300 });
        recorder.jobDone({ tenant: t.name, at: at + 305 });
      }
    }
  }
  return { key, title: key === 'ours' ? 'bulk-limiter' : 'original fixed window', deferring: true, recorder };
}

function report(): { html: string; text: string } {
  const systems = [playedSystem('ours'), playedSystem('baseline')];
  const summary = summarize({
    systems,
    tenants: TENANTS,
    spec: SPEC,
    durationMs: DURATION_MS,
    drainedAtMs: { ours: 2400, baseline: 2400 },
    storeKind: 'memory',
  });
  return { html: renderReport({ summary, systems, endMs: 2600 }), text: formatSummary(summary) };
}

const section = (html: string, key: string): string => {
  const from = html.indexOf(`<section class="system ${key}">`);
  return html.slice(from, html.indexOf('</section>', from));
};

describe('the demo report on the same numbers for both systems', () => {
  const { html, text } = report();

  it('colours every side-by-side fact alike when both systems have the same value', () => {
    const facts = html.slice(html.indexOf('<table class="facts">'), html.indexOf('</table>'));
    const rows = [...facts.matchAll(/<tr><th>([^<]+)<\/th><td class="([^"]*)">([^<]*)<\/td><td class="([^"]*)">([^<]*)<\/td>/g)];
    expect(rows.length).toBeGreaterThanOrEqual(5);
    for (const [, label, oursClass, oursText, baseClass, baseText] of rows) {
      expect({ label, baseText, baseClass }).toEqual({ label, baseText: oursText, baseClass: oursClass });
    }
  });

  it('colours the tenants’ “vs fair” cells alike in both tables', () => {
    const cells = (key: string) => [...section(html, key).matchAll(/<td class="vs-fair ?([^"]*)">([^<]*)</g)].map((m) => `${m[2]}:${m[1]}`);
    expect(cells('ours')).toHaveLength(TENANTS.length);
    expect(cells('baseline')).toEqual(cells('ours'));
  });

  it('draws a limit line only on charts whose buckets are the limit’s 1 s window', () => {
    const charts = [...html.matchAll(/<svg class="chart" id="([^"]+)"[\s\S]*?<\/svg>/g)];
    const withGuide = charts.filter((m) => m[0].includes('class="guide"')).map((m) => m[1]);
    expect(withGuide.sort()).toEqual(['baseline-admitted', 'baseline-window', 'ours-admitted', 'ours-window']);
    for (const m of charts.filter((c) => c[0].includes('class="guide"'))) expect(m[0]).toContain('limit 60 per 1 s');
    expect(charts.map((m) => m[1])).toEqual(expect.arrayContaining(['ours-load', 'baseline-load']));
  });

  it('splits fair shares from the strict capacity (limit − burst + 1)/window, not from the limit', () => {
    // 55/s over demands 150/s (w 1), 40/s (w 3), 10/s (w 1): the importer's 10 fits under 55/5 = 11, the other
    // 45 split 1:3 → 11.25 and 33.75. Split from the limit (60/s) it would be 12.5 and 37.5.
    const fair = [...section(html, 'ours').matchAll(/<td class="fair">([^<]+)</g)].map((m) => Number(m[1]));
    expect(fair).toEqual([11.3, 33.8, 10]);
    expect(text).toContain('= 55.0/s (limit 60, burst 6)');
  });

  it('shows deferred work with the tenant that sent it: counts, its drain, its own backlog series', () => {
    const ours = section(html, 'ours');
    expect(ours).toMatch(/<tr data-tenant="importer">.*<td class="deferred">10<\/td><td class="last-job">\+0\.2 s<\/td>/);
    expect(ours).toMatch(/<tr data-tenant="paying">.*<td class="deferred">0<\/td><td class="last-job"><\/td>/);
    const backlog = /<svg class="chart" id="ours-backlog"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? '';
    expect([...backlog.matchAll(/data-series="([^"]+)"/g)].map((m) => m[1])).toEqual(['importer']);
    expect(html).toContain('10 (importer 10)');
    expect(text).toContain('10 (importer 10)');
  });
});

describe('strictCapacityPerS', () => {
  it('is what the library’s resolved defaults admit: (limit − burst + 1) per window, or the limit when sustained', async () => {
    const strict = createLimiter({ limit: 60, windowMs: 1000 });
    const sustained = createLimiter({ limit: 60, windowMs: 500, tuning: { sustained: true } });
    expect(strictCapacityPerS(strict.spec)).toBe(60 - strict.spec.burst + 1);
    expect(strict.spec.burst).toBeGreaterThan(1);
    expect(strictCapacityPerS(sustained.spec)).toBe(120);
    await Promise.all([strict.destroy(), sustained.destroy()]);
  });
});

describe('probeDashboard', () => {
  const servers: Server[] = [];
  const serve = async (status: number): Promise<number> => {
    const server = createServer((req, res) => {
      res.statusCode = req.url === '/dashboard' ? status : 404;
      res.end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('answers the URL when the app serves /dashboard with 200', async () => {
    const port = await serve(200);
    await expect(probeDashboard(port)).resolves.toBe(`http://localhost:${port}/dashboard`);
  });

  it('answers null for a 404, or when nothing listens', async () => {
    const port = await serve(404);
    await expect(probeDashboard(port)).resolves.toBeNull();
    const closed = await serve(200);
    await new Promise((resolve) => servers.pop()?.close(resolve));
    await expect(probeDashboard(closed)).resolves.toBeNull();
  });
});
