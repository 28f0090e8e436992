'use strict';
/**
 * `npm run demo` — why bulk-limiter exists, in one command. Starts the example Express app twice (bulk-limiter
 * on the MemoryStore, or Redis when REDIS_URL is set; and the original fixed-window design), plays the same
 * multi-tenant load against both, shows a live view, then prints a summary and writes an HTML report.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseOptions, HELP } = require('./demo/options');
const { buildTenants, buildPlan } = require('./demo/scenario');
const { Recorder } = require('./demo/recorder');
const { drive } = require('./demo/driver');
const { startSystems } = require('./demo/systems');
const { LiveView } = require('./demo/live-view');
const { summarize, formatSummary } = require('./demo/summary');
const { renderReport } = require('./demo/report');
const { probeDashboard } = require('./demo/dashboard-probe');

const WINDOW_MS = 1000;

async function main(argv) {
  const options = parseOptions(argv);
  if (options.help) {
    console.log(HELP);
    return;
  }
  const durationMs = options.durationS * 1000;
  const drainLimitMs = options.short ? 10_000 : 20_000;
  const tenants = buildTenants({ limit: options.limit, lightTenants: options.lightTenants });
  const startMs = Date.now() + 300; // a moment for the servers to listen
  const recorders = {
    ours: new Recorder({ tenants, startMs }),
    baseline: new Recorder({ tenants, startMs }),
  };
  const { systems, storeKind, close } = await startSystems({ limit: options.limit, windowMs: WINDOW_MS, recorders });
  const plan = buildPlan({ tenants, durationMs, seed: options.seed, startEpochMs: startMs });
  const dashboard = await probeDashboard(systems.find((s) => s.key === 'ours').port);
  if (dashboard) console.log(`Dashboard (bulk-limiter, while the demo runs): ${dashboard}`);
  const view = new LiveView({ systems, tenants, durationMs, limit: options.limit, storeKind, tty: Boolean(process.stdout.isTTY) && !options.plain });

  let phase = 'load';
  const refresh = setInterval(() => view.update(Date.now() - startMs, phase), 250);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startMs - Date.now())));
  await drive({ plan, systems, startMs });

  // Let the deferred backlogs drain (bounded, so the demo always ends).
  phase = 'draining';
  const drainedAtMs = {};
  const deadline = Date.now() + drainLimitMs;
  while (Date.now() < deadline) {
    for (const s of systems) {
      if (drainedAtMs[s.key] === undefined && s.recorder.backlog() <= 0) drainedAtMs[s.key] = Date.now() - startMs;
    }
    if (systems.every((s) => drainedAtMs[s.key] !== undefined)) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, 300)); // show a quiet tail in the charts
  const endMs = Date.now() - startMs;
  phase = 'done';
  clearInterval(refresh);
  view.update(endMs, phase);
  await close();

  const spec = systems.find((s) => s.key === 'ours').limiter.spec;
  const summary = summarize({ systems, tenants, spec, durationMs, drainedAtMs, storeKind });
  console.log(formatSummary(summary));

  const out = path.resolve(options.out ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bulk-limiter-demo-')), 'report.html'));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, renderReport({ summary, systems, endMs }));
  if (options.json) fs.writeFileSync(path.resolve(options.json), JSON.stringify(summary, null, 2) + '\n');
  console.log(`\nHTML report: ${out}`);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
