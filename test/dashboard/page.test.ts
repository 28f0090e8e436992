/**
 * The dashboard page in headless Chromium, served by Express with a real limiter: after a known sequence of
 * requests from three tenants (and one whose id is markup), the page shows each tenant that sent traffic with
 * the counts the responses showed and how long the oldest waiting job has waited, renders the hostile id as
 * text, logs no console error, and offers the dead-letter and override actions only once a token unlocks them;
 * Retry then really retries the job, and the override form sets and changes a tenant's override.
 * UPDATE_SCREENSHOT=1 runs a longer load and writes docs/dashboard.png (the picture in docs/operations.md).
 */
import express from 'express';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createLimiter } from '../../src/limiter/limiter';
import { bulkLimiter, dashboard } from '../../src/middleware/express';
import { MemoryStore } from '../../src/memory/memory-store';
import { deadJob } from './fixtures';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const SCREENSHOT = process.env.UPDATE_SCREENSHOT === '1';
const LOAD_MS = SCREENSHOT ? 14_000 : 2_000;
const HOSTILE = `<img src=x onerror="document.title='pwned'"><script>window.pwned=1</script>`;
const TOKEN = 'let-me-in';
const PLANS: Record<string, number> = { acme: 3 };

type Outcome = 'allowed' | 'denied' | 'deferred';
interface Row {
  group: string;
  allowed: string;
  denied: string;
  deferred: string;
}

describe('the dashboard page in headless Chromium', () => {
  let browser: Browser;
  let server: Server;
  let base: string;
  // The store's clock moves 100 ms per tick of the load, however slowly a busy machine sends it: what is admitted,
  // denied and deferred depends on the load, not on the machine's speed.
  let storeNow = Date.now();
  const store = new MemoryStore({ clock: () => storeNow });
  const limiter = createLimiter({
    store,
    name: 'api',
    limit: 40,
    windowMs: 1000,
    maxDeferMs: 600_000,
    maxBacklog: 10_000,
    plans: { gold: { weight: 3 }, free: { weight: 1 } },
  });
  const tenantOf = (req: express.Request) => req.get('x-tenant') ?? 'anonymous';

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium or set CHROMIUM_PATH.`);
    const app = express();
    const shared = { limiter, group: tenantOf, weight: (g: string) => PLANS[g] ?? 1 };
    app.get('/api/export', bulkLimiter(shared), (_req, res) => {
      res.json({ rows: [] });
    });
    app.post(
      '/api/imports',
      bulkLimiter({ ...shared, defer: { type: 'import', payload: () => ({ rows: 1 }), statusUrl: (id: string) => `/jobs/${id}` } }),
      (_req, res) => {
        res.status(201).end();
      },
    );
    app.use(
      '/dashboard',
      dashboard({
        limiters: [limiter],
        plan: (g) => (PLANS[g] === undefined ? undefined : `gold (weight ${PLANS[g]})`),
        authorize: (req) => req.get('authorization') === `Bearer ${TOKEN}`,
      }),
    );
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** What each tenant's responses said, by outcome. */
  const seen = new Map<string, Record<Outcome, number>>();
  const tally = (tenant: string, status: number) => {
    const outcome: Outcome | undefined = status === 202 ? 'deferred' : status === 429 ? 'denied' : status < 300 ? 'allowed' : undefined;
    if (outcome === undefined) throw new Error(`${tenant}: unexpected status ${status}`);
    const counts = seen.get(tenant) ?? { allowed: 0, denied: 0, deferred: 0 };
    counts[outcome] += 1;
    seen.set(tenant, counts);
  };
  const send = async (tenant: string, path: '/api/export' | '/api/imports') => {
    const res = await fetch(`${base}${path}`, { method: path === '/api/imports' ? 'POST' : 'GET', headers: { 'x-tenant': tenant } });
    await res.arrayBuffer();
    tally(tenant, res.status);
  };

  /** Every 100 ms: acme 2 requests, bulkbot 6 (it floods), importer a burst of 12 imports each second, the hostile id now and then. */
  async function load(ms: number): Promise<void> {
    const end = Date.now() + ms;
    const start = storeNow;
    for (let tick = 0; Date.now() < end; tick++) {
      const next = Date.now() + 100;
      storeNow = start + tick * 100;
      const batch: Array<Promise<void>> = [send('acme', '/api/export'), send('acme', '/api/export')];
      for (let i = 0; i < 6; i++) batch.push(send('bulkbot', '/api/export'));
      if (tick % 10 === 0) for (let i = 0; i < 12; i++) batch.push(send('importer', '/api/imports'));
      if (tick % 5 === 0) batch.push(send(HOSTILE, '/api/export'));
      await Promise.all(batch);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
    }
  }

  const rows = (page: Page): Promise<Row[]> =>
    page.$$eval('table.tenants tbody tr[data-group]', (trs) =>
      trs.map((tr) => ({
        group: tr.querySelector('.c-group')?.textContent ?? '',
        allowed: tr.querySelector('.c-total-allowed')?.textContent ?? '',
        denied: tr.querySelector('.c-total-denied')?.textContent ?? '',
        deferred: tr.querySelector('.c-total-deferred')?.textContent ?? '',
      })),
    );

  it('shows each tenant with the counts its responses showed, the hostile id as text, and actions only once unlocked', async () => {
    const dead = await deadJob(limiter, 'importer', 'upstream rejected the import: account closed');
    await limiter.setOverride('scraper-42', { blocked: true }, { ttlMs: 3_600_000, reason: 'scraping the export API' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${base}/dashboard`);
    await page.waitForSelector('body[data-ready="1"]');
    // Read-only until unlocked: the dead letter is listed, with no buttons.
    await expect(page.locator('table.dead tbody tr').count()).resolves.toBe(1);
    await expect(page.locator('table.dead button').count()).resolves.toBe(0);
    await expect(page.locator('#unlock').isVisible()).resolves.toBe(true);
    await page.fill('#token', TOKEN);
    await page.click('#unlock button');
    await page.waitForSelector('table.dead button');
    await expect(page.locator('#unlock').isVisible()).resolves.toBe(false);

    const loading = load(LOAD_MS);
    if (SCREENSHOT) {
      await new Promise((resolve) => setTimeout(resolve, LOAD_MS - 1500));
      await page.screenshot({ path: 'docs/dashboard.png', fullPage: true });
    }
    await loading;
    // Two polls after the last request (the store's clock moves on by as much).
    storeNow += 2200;
    await new Promise((resolve) => setTimeout(resolve, 2200));

    const shown = await rows(page);
    const fmt = (n: number) => n.toLocaleString('en-US');
    const expected = [...seen].map(([group, c]) => ({ group, allowed: fmt(c.allowed), denied: fmt(c.denied), deferred: fmt(c.deferred) }));
    expect(shown.sort((a, b) => a.group.localeCompare(b.group))).toEqual(expected.sort((a, b) => a.group.localeCompare(b.group)));
    // The flood was denied, the imports deferred: every outcome is on the page.
    expect(seen.get('bulkbot')!.denied).toBeGreaterThan(0);
    expect(seen.get('importer')!.deferred).toBeGreaterThan(0);
    await expect(page.locator('tr[data-group="acme"] .c-plan').textContent()).resolves.toBe('gold (weight 3)');

    // The hostile id is text: no element it would have made, no script it would have run.
    await expect(page.locator('main img').count()).resolves.toBe(0);
    await expect(page.locator('main script').count()).resolves.toBe(0);
    await expect(page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).resolves.toBeUndefined();
    await expect(page.title()).resolves.toBe('bulk-limiter dashboard');

    // The oldest waiting job: the importer's deferred jobs wait (no worker runs) since its first deferral, in
    // the load; acme never deferred. The queue's tile shows the limiter's oldest, at least the importer's.
    const oldestOf = async (selector: string) => Number(await page.locator(selector).getAttribute('data-ms'));
    const importerWait = await oldestOf('tr[data-group="importer"] .c-oldest');
    expect(importerWait).toBeGreaterThan(1000);
    expect(importerWait).toBeLessThan(LOAD_MS + 5000);
    await expect(page.locator('tr[data-group="importer"] .c-oldest').textContent()).resolves.toMatch(/^[\d.]+ s$/);
    await expect(page.locator('tr[data-group="acme"] .c-oldest').textContent()).resolves.toBe('–');
    // (the two are separate store reads of one poll, a few ms apart on the store clock)
    expect(await oldestOf('.states .s-oldest')).toBeGreaterThanOrEqual(importerWait - 50);
    await expect(page.locator('.states .s-oldest span').textContent()).resolves.toBe('oldest waiting');

    // Each state of the queue is shown, and the oldest waiting job; Retry sends the dead job back.
    await expect(page.locator('.states .state[data-state]').count()).resolves.toBe(6);
    await expect(page.locator('table.dead .c-reason').textContent()).resolves.toBe('upstream rejected the import: account closed');
    await page.click('table.dead button:has-text("Retry")');
    await page.waitForSelector('text=No dead letters.');
    expect((await limiter.getJob(dead))?.state).not.toBe('dead');

    // The override form: what is typed survives the page's redraws; a mistake shows the server's 400 as it is;
    // a valid one sets the override, which the list then shows; Edit fills the form with it to change it.
    const form = page.locator('section[data-limiter="api"] form.override-form');
    await form.locator('input[name="group"]').fill('partner');
    await form.locator('input[name="weight"]').fill('0');
    await new Promise((resolve) => setTimeout(resolve, 1200)); // a poll and its redraw
    await expect(form.locator('input[name="group"]').inputValue()).resolves.toBe('partner');
    await form.locator('button[type="submit"]').click();
    await expect(form.locator('.form-msg.bad').textContent()).resolves.toMatch(/`settings\.weight`.*got `0` \(number\)/);
    expect(await limiter.getOverride('partner')).toBeNull();
    await expect(form.locator('select[name="plan"] option').allTextContents()).resolves.toEqual(['–', 'gold', 'free']);
    await form.locator('select[name="plan"]').selectOption('gold');
    await form.locator('input[name="weight"]').fill('5');
    await form.locator('input[name="ttl"]').fill('30');
    await form.locator('input[name="reason"]').fill('migration');
    await form.locator('button[type="submit"]').click();
    const row = page.locator('table.overrides tr[data-group="partner"]');
    await row.waitFor();
    await expect(row.locator('.c-settings').textContent()).resolves.toBe('plan gold; weight 5');
    await expect(row.locator('.c-reason').textContent()).resolves.toBe('migration');
    const set = (await limiter.getOverride('partner'))!;
    expect(set).toMatchObject({ settings: { plan: 'gold', weight: 5 }, reason: 'migration' });
    expect(set.expiresAt! - set.setAt).toBe(30 * 60_000);
    await expect(form.locator('input[name="group"]').inputValue()).resolves.toBe(''); // cleared once set

    await row.locator('button:has-text("Edit")').click();
    await expect(form.locator('input[name="group"]').inputValue()).resolves.toBe('partner');
    await expect(form.locator('select[name="plan"]').inputValue()).resolves.toBe('gold');
    await expect(form.locator('input[name="weight"]').inputValue()).resolves.toBe('5');
    await expect(form.locator('input[name="ttl"]').inputValue()).resolves.toBe('30');
    await form.locator('input[name="weight"]').fill('');
    await form.locator('select[name="plan"]').selectOption('');
    await form.locator('input[name="blocked"]').check();
    await form.locator('button[type="submit"]').click();
    await page.waitForSelector('table.overrides tr[data-group="partner"] .c-settings:text-is("blocked")');
    expect((await limiter.getOverride('partner'))?.settings).toEqual({ blocked: true });
    expect((await limiter.check('partner')).policy).toBe('blocked');
    // the browser reports the refused POST itself; nothing else may be logged
    const refused = errors.filter((e) => /status of 400/.test(e));
    expect(refused.length).toBeLessThanOrEqual(1);
    errors.splice(0, errors.length, ...errors.filter((e) => !refused.includes(e)));

    const shot = join(mkdtempSync(join(tmpdir(), 'bulk-limiter-dashboard-')), 'dashboard.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    // Light or dark, as the system asks.
    const background = () => page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
    await page.emulateMedia({ colorScheme: 'light' });
    const light = await background();
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await background()).not.toBe(light);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
