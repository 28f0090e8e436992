/**
 * `npm run demo` in short mode: it exits 0, every request is accounted for, every deferred job completes,
 * and the HTML report renders in a real headless Chromium with one series per tenant and no console errors.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { runDemo, type DemoRun, type SystemSummary } from './run-demo';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

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
    expect(run.stdout).toMatch(/^bulk-limiter dashboard \(live while the demo runs\): http:\/\/127\.0\.0\.1:\d+\/dashboard$/m);
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

  it('reports every tenant, and a backend load near the limit for bulk-limiter', () => {
    const { ours, baseline } = run.summary.systems;
    const names = run.summary.tenants.map((t) => t.name);
    expect(ours.tenants.map((t) => t.name)).toEqual(names);
    expect(baseline.tenants.map((t) => t.name)).toEqual(names);
    // Loose on purpose (jobs start a little after their admission): the exact bound is the admission tests' job.
    expect(ours.maxInWindow).toBeLessThanOrEqual(run.summary.limit * 1.1);
    expect(ours.maxInWindow).toBeGreaterThan(run.summary.limit * 0.5);
  });

  describe('the HTML report in headless Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      if (!existsSync(CHROMIUM)) {
        throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH. .ci/run installs it.`);
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
      for (const key of ['ours', 'baseline']) {
        const series = await page.locator(`#${key}-admitted g.series`).evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-series')));
        expect(series).toEqual(tenants);
        // Each series is a drawn line, not an empty element.
        const drawn = await page.locator(`#${key}-admitted g.series polyline`).evaluateAll((nodes) => nodes.filter((n) => (n as unknown as { getTotalLength(): number }).getTotalLength() > 0).length);
        expect(drawn).toBe(tenants.length);
        const box = await page.locator(`#${key}-admitted`).boundingBox();
        expect(box?.width ?? 0).toBeGreaterThan(300);
        await expect(page.locator(`#${key}-backlog g.series`).count()).resolves.toBe(1);
      }
      expect(errors).toEqual([]);
      await page.close();
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
