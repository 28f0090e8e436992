/**
 * `npm run demo` in short mode: it exits 0, every request is accounted for, every deferred job completes,
 * bulk-limiter's backend work stays within the limit, the plain output counts deferrals by tenant, and the
 * HTML report renders in a real headless Chromium and tells the truth: no limit line where the buckets differ
 * from the limit's window, fair shares split from the strict capacity, deferred work by tenant, equal values
 * coloured alike.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createLimiter } from '../../src';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { runDemo, type DemoRun, type SystemSummary } from './run-demo';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Weighted max-min fair split of `capacity` by bisection on the water level s (each gets min(demand, s·w)):
 * independent of the demo's own water-filling.
 */
function waterFill(capacity: number, demands: { rate: number; weight: number }[]): number[] {
  const given = (level: number) => demands.map((d) => Math.min(d.rate, level * d.weight));
  const total = (level: number) => given(level).reduce((a, b) => a + b, 0);
  const all = demands.reduce((sum, d) => sum + d.rate, 0);
  if (all <= capacity) return demands.map((d) => d.rate);
  let [lo, hi] = [0, Math.max(...demands.map((d) => d.rate / d.weight))];
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (total(mid) < capacity) lo = mid;
    else hi = mid;
  }
  return given(hi);
}

function expectBooksBalance(system: SystemSummary): void {
  for (const t of system.tenants) {
    // Every request sent got exactly one answer, and nothing failed.
    expect({ tenant: t.name, answered: t.admitted + t.deferred + t.rejected + t.errors }).toEqual({ tenant: t.name, answered: t.sent });
    expect({ tenant: t.name, errors: t.errors }).toEqual({ tenant: t.name, errors: 0 });
    // After the drain, every deferred job ran exactly as often as it was deferred.
    expect({ tenant: t.name, completed: t.completed }).toEqual({ tenant: t.name, completed: t.deferred });
  }
  const sum = (key: 'sent' | 'admitted' | 'deferred' | 'rejected' | 'completed') => system.tenants.reduce((n, t) => n + t[key], 0);
  expect(system.totals.sent).toBe(sum('sent'));
  expect(system.totals.admitted + system.totals.deferred + system.totals.rejected).toBe(system.totals.sent);
  expect(system.totals.completed).toBe(system.totals.deferred);
  expect(system.drainMs).not.toBeNull();
}

describe('npm run demo (short mode, MemoryStore)', () => {
  let run: DemoRun;
  beforeAll(async () => {
    run = await runDemo(['--short', '--duration', '3', '--limit', '60']);
  }, 60_000);

  it('exits 0 well under a minute and prints the summary and the report path', () => {
    expect(run.code).toBe(0);
    expect(run.elapsedMs).toBeLessThan(45_000);
    expect(run.stdout).toContain('side by side');
    expect(run.stdout).toContain(`HTML report: ${run.reportPath}`);
    // The example app mounts the dashboard, so the demo prints its URL (one line; the probe is tested below).
    expect(run.stdout).toMatch(/^Dashboard \(bulk-limiter, while the demo runs\): http:\/\/localhost:\d+\/dashboard$/m);
    expect(existsSync(run.reportPath)).toBe(true);
    expect(run.summary.storeKind).toBe('memory');
  });

  it('accounts for every request in both systems: admitted + deferred + rejected = sent, completed = deferred', () => {
    const { ours, baseline } = run.summary.systems;
    expect(ours.totals.sent).toBeGreaterThan(100);
    expect(baseline.totals.sent).toBe(ours.totals.sent); // the same load went to both
    expect(ours.deferring).toBe(true);
    expect(ours.totals.deferred).toBeGreaterThan(0); // the importer's bursts are deferred, not dropped
    expectBooksBalance(ours);
    expectBooksBalance(baseline);
  });

  it('reports every tenant, and bulk-limiter’s backend work (live requests + job starts) within the limit in any 1 s', () => {
    const { ours, baseline } = run.summary.systems;
    const names = run.summary.tenants.map((t) => t.name);
    expect(ours.tenants.map((t) => t.name)).toEqual(names);
    expect(baseline.tenants.map((t) => t.name)).toEqual(names);
    // Jobs spend the budget when a worker starts them, and the demo counts them there.
    expect(ours.maxInWindow).toBeLessThanOrEqual(run.summary.limit);
    expect(ours.maxInWindow).toBeGreaterThan(run.summary.limit * 0.5);
  });

  it('counts deferrals in the plain output, with the tenant that sent them', () => {
    const lines = run.stdout.split('\n').filter((line) => line.startsWith('['));
    const last = lines.find((line) => line.includes(' done]')) ?? '';
    for (const key of ['ours', 'baseline'] as const) {
      const s = run.summary.systems[key];
      const part = last.split(' | ').find((p) => p.includes(`${s.title}:`)) ?? '';
      const senders = s.tenants
        .filter((t) => t.deferred > 0)
        .sort((a, b) => b.deferred - a.deferred)
        .slice(0, 3);
      const named = senders.length === 0 ? '' : ` (${senders.map((t) => `${t.name} ${t.deferred}`).join(', ')}`;
      expect(part).toContain(`so far deferred ${s.totals.deferred}${named}`);
      expect(part).toContain(`${s.totals.completed} jobs done`);
    }
    expect(run.summary.systems.ours.totals.deferred).toBeGreaterThan(0);
  });

  it('prints the dashboard URL only if the example app serves one (one probe)', () => {
    const mentions = run.stdout.split('\n').filter((line) => line.includes('/dashboard'));
    expect(mentions.length).toBeLessThanOrEqual(1);
    for (const line of mentions) expect(line).toMatch(/^Dashboard \(bulk-limiter, while the demo runs\): http:\/\/localhost:\d+\/dashboard$/);
  });

  describe('the HTML report in headless Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      if (!existsSync(CHROMIUM)) {
        throw new Error(
          `Chromium not found at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH. .ci/run installs it.`,
        );
      }
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    }, 30_000);
    afterAll(async () => {
      await browser?.close();
    });

    it('renders both systems, one series per tenant in each admitted chart, no console errors', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(String(error)));
      await page.goto(`file://${run.reportPath}`);
      await expect(page.locator('h1').textContent()).resolves.toContain('bulk-limiter');
      const tenants = run.summary.tenants.map((t) => t.name);
      for (const key of ['ours', 'baseline'] as const) {
        const series = await page.locator(`#${key}-admitted g.series`).evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-series')));
        expect(series).toEqual(tenants);
        // Each series is a drawn line, not an empty element.
        const drawn = await page
          .locator(`#${key}-admitted g.series polyline`)
          .evaluateAll((nodes) => nodes.filter((n) => (n as unknown as { getTotalLength(): number }).getTotalLength() > 0).length);
        expect(drawn).toBe(tenants.length);
        const box = await page.locator(`#${key}-admitted`).boundingBox();
        expect(box?.width ?? 0).toBeGreaterThan(300);
        // The tenant table fits in its column (at 1280 px), last column included.
        const fit = await page.locator(`section.system.${key}`).evaluate((section) => ({
          table: Math.round(section.querySelector('table.tenants')?.getBoundingClientRect().right ?? Infinity),
          section: Math.round(section.getBoundingClientRect().right),
        }));
        expect(fit.table).toBeLessThanOrEqual(fit.section);
        // Deferred work with the tenant that sent it: one backlog series per tenant that deferred anything.
        const backlog = await page.locator(`#${key}-backlog g.series`).evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-series')));
        expect(backlog).toEqual(run.summary.systems[key].tenants.filter((t) => t.deferred > 0).map((t) => t.name));
      }
      expect(errors).toEqual([]);
      await page.close();
    });

    describe('tells the truth at a glance', () => {
      let page: Page;
      beforeAll(async () => {
        page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        await page.goto(`file://${run.reportPath}`);
      });
      afterAll(async () => {
        await page?.close();
      });
      const keys = ['ours', 'baseline'] as const;

      it('draws a limit line only on charts whose buckets are the limit’s 1 s window, and bulk-limiter stays under it', async () => {
        const guided = await page
          .locator('svg.chart')
          .evaluateAll((charts) =>
            charts.filter((c) => c.querySelector('.guide')).map((c) => ({ id: c.id, label: c.querySelector('.guide-label')?.textContent })),
          );
        expect(guided.map((g) => g.id).sort()).toEqual(['baseline-admitted', 'baseline-window', 'ours-admitted', 'ours-window']);
        for (const g of guided) expect(g.label).toBe(`limit ${run.summary.limit} per 1 s`);
        for (const key of keys) {
          await expect(page.locator(`#${key}-load .guide`).count()).resolves.toBe(0);
          await expect(page.locator(`#${key}-load .chart-title`).textContent()).resolves.toContain('per 100 ms');
        }
        // In the trailing-1 s chart, the highest point of bulk-limiter's work is on or below the limit line
        // (SVG y grows downwards), and the fixed window's is above it whenever it broke the limit.
        const heights = await page.locator('[id$="-window"]').evaluateAll((charts) =>
          charts.map((c) => ({
            id: c.id,
            guideY: Number(c.querySelector('.guide')?.getAttribute('y1')),
            topY: Math.min(...(c.querySelector('polyline')?.getAttribute('points') ?? '').split(' ').map((p: string) => Number(p.split(',')[1]))),
          })),
        );
        const ours = heights.find((h) => h.id === 'ours-window');
        const base = heights.find((h) => h.id === 'baseline-window');
        expect(ours!.topY).toBeGreaterThanOrEqual(ours!.guideY);
        if (run.summary.systems.baseline.maxInWindow > run.summary.limit) expect(base!.topY).toBeLessThan(base!.guideY);
      });

      it('shows fair shares that are the water-filled split of the strict capacity, the same for both systems', async () => {
        const probe = createLimiter({ limit: run.summary.limit, windowMs: run.summary.windowMs });
        const capacity = ((run.summary.limit - probe.spec.burst + 1) * 1000) / run.summary.windowMs;
        await probe.destroy();
        expect(capacity).toBeLessThan(run.summary.limit);
        await expect(page.locator('.sub .capacity').textContent()).resolves.toBe(capacity.toFixed(1));
        const seconds = run.summary.durationMs / 1000;
        for (const key of keys) {
          const rows = await page.locator(`.system.${key} table.tenants tbody tr`).evaluateAll((trs) =>
            trs.map((tr) => {
              const cells = [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '');
              return { weight: Number(cells[1]), demand: Number(cells[2]), fair: Number(tr.querySelector('.fair')?.textContent) };
            }),
          );
          expect(rows).toHaveLength(run.summary.tenants.length);
          const expected = waterFill(
            capacity,
            rows.map((r) => ({ rate: r.demand / seconds, weight: r.weight })),
          );
          rows.forEach((r, i) => expect(Math.abs(r.fair - expected[i]!)).toBeLessThanOrEqual(0.051));
        }
      });

      it('shows each tenant’s deferred jobs and their drain, in its row and in the side-by-side facts', async () => {
        for (const key of keys) {
          const s = run.summary.systems[key];
          for (const t of s.tenants) {
            const row = page.locator(`.system.${key} tr[data-tenant="${t.name}"]`);
            await expect(row.locator('.deferred').textContent()).resolves.toBe(String(t.deferred));
            const lastJob = await row.locator('.last-job').textContent();
            expect(lastJob === '').toBe(t.deferred === 0);
          }
        }
        const importer = run.summary.systems.ours.tenants.find((t) => t.name === 'importer')!;
        expect(importer.deferred).toBeGreaterThan(0);
        const fact = await page.locator('table.facts tr', { hasText: 'jobs deferred, by tenant' }).locator('td').first().textContent();
        expect(fact).toContain(`importer ${importer.deferred}`);
      });

      it('colours equal values alike: one colour per “vs fair” value, and per fact when both systems match', async () => {
        const colourOf = (selector: string) =>
          page
            .locator(selector)
            .evaluateAll((cells) =>
              cells.map((c) => ({ text: c.textContent ?? '', colour: c.ownerDocument.defaultView?.getComputedStyle(c).color })),
            );
        const vsFair = await colourOf('table.tenants td.vs-fair');
        const byText = new Map<string, Set<string>>();
        for (const c of vsFair) byText.set(c.text, (byText.get(c.text) ?? new Set()).add(c.colour));
        for (const [text, colours] of byText) expect({ text, colours: colours.size }).toEqual({ text, colours: 1 });
        const facts = await page
          .locator('table.facts tbody tr')
          .evaluateAll((trs) =>
            trs.map((tr) =>
              [...tr.querySelectorAll('td')]
                .slice(0, 2)
                .map((td) => ({ text: td.textContent ?? '', colour: td.ownerDocument.defaultView?.getComputedStyle(td).color })),
            ),
          );
        expect(facts.length).toBeGreaterThanOrEqual(5);
        for (const [ours, base] of facts) if (ours!.text === base!.text) expect(base!.colour).toBe(ours!.colour);
      });
    });
  });
});

describe('npm run demo on Redis (REDIS_URL)', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('runs the same load against a real redis-server and the books balance', async () => {
    const run = await runDemo(['--short', '--duration', '2', '--limit', '40'], { REDIS_URL: redis.url });
    expect(run.summary.storeKind).toBe('redis');
    expectBooksBalance(run.summary.systems.ours);
    expectBooksBalance(run.summary.systems.baseline);
  }, 60_000);
});
