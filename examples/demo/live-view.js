'use strict';
/**
 * What the demo shows while it runs. On a terminal: a progress bar and a table redrawn in place, per tenant
 * admitted / deferred / rejected per second for both systems, deferrals and backlog by tenant, jobs completed.
 * Otherwise (CI, a pipe): one plain line every two seconds with the same rates and the deferrals by tenant.
 */

const BOLD = '\x1b[1m';
const DIM = '\x1b[2m';
const GREEN = '\x1b[32m';
const YELLOW = '\x1b[33m';
const RED = '\x1b[31m';
const RESET = '\x1b[0m';

function bar(fraction, width) {
  const full = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

class LiveView {
  constructor({ systems, tenants, durationMs, limit, storeKind, tty, out = process.stdout }) {
    this.systems = systems;
    this.tenants = tenants;
    this.durationMs = durationMs;
    this.limit = limit;
    this.storeKind = storeKind;
    this.tty = tty;
    this.out = out;
    this.drawnLines = 0;
    this.lastPlainMs = -Infinity;
  }

  /** Per-second rates over the last full second (answers lag their send time a little). */
  rates(system, elapsedMs, tenant) {
    const to = Math.max(0, Math.min(elapsedMs, this.durationMs) - 200);
    const from = to - 1000;
    const r = system.recorder;
    return {
      sent: r.between('sent', from, to, tenant),
      admitted: r.between('admitted', from, to, tenant),
      deferred: r.between('deferred', from, to, tenant),
      rejected: r.between('rejected', from, to, tenant),
      work: r.between('work', elapsedMs - 1000, elapsedMs, tenant),
    };
  }

  update(elapsedMs, phase) {
    if (this.tty) this.draw(elapsedMs, phase);
    else if (elapsedMs - this.lastPlainMs >= 2000 || phase === 'done') {
      this.lastPlainMs = elapsedMs;
      this.out.write(this.plainLine(elapsedMs, phase) + '\n');
    }
  }

  plainLine(elapsedMs, phase) {
    const head = `[${(elapsedMs / 1000).toFixed(1).padStart(5)} s ${phase}]`;
    const parts = this.systems.map((s) => {
      const rate = this.rates(s, elapsedMs);
      const r = s.recorder;
      return (
        `${s.title}: ${rate.admitted} admitted/s, ${rate.deferred} deferred/s, ${rate.rejected} rejected/s, backend ${rate.work}/s; ` +
        `so far deferred ${withTenants(r.total('deferred'), r.byTenant('deferred'))}, backlog ${withTenants(r.backlog(), r.byTenant('backlog'))}, ${r.total('completed')} jobs done`
      );
    });
    return `${head} ${parts.join(' | ')}`;
  }

  draw(elapsedMs, phase) {
    const label = 22; // tenant, weight, sent/s
    const cell = 26; // one system's columns
    const row = (head, cells) => pad(head, label) + cells.map((c) => pad(c, cell)).join('');
    const progress = Math.min(1, elapsedMs / this.durationMs);
    const lines = [
      `${BOLD}bulk-limiter demo${RESET}  ${bar(progress, 30)}  ${(Math.min(elapsedMs, this.durationMs) / 1000).toFixed(1)} / ${this.durationMs / 1000} s  ` +
        `${DIM}limit ${this.limit}/s · ${this.storeKind} store · ${phase}${RESET}`,
      '',
      row(
        '',
        this.systems.map((s) => `   ${BOLD}${s.title}${RESET}`),
      ),
      row(
        `${DIM}tenant        w sent/s`,
        this.systems.map(() => '  admit/s defer/s reject/s'),
      ) + RESET,
    ];
    for (const t of this.tenants) {
      const sent = this.rates(this.systems[0], elapsedMs, t.name).sent;
      const cells = this.systems.map((s) => {
        const r = this.rates(s, elapsedMs, t.name);
        return `${GREEN}${num(r.admitted, 9)}${RESET}${YELLOW}${num(r.deferred, 8)}${RESET}${RED}${num(r.rejected, 9)}${RESET}`;
      });
      lines.push(row(`${t.name.slice(0, 12).padEnd(12)}${num(t.weight, 3)}${num(sent, 7)}`, cells));
    }
    lines.push('');
    lines.push(
      row(
        `backend load (≤ ${this.limit})`,
        this.systems.map((s) => {
          const work = this.rates(s, elapsedMs).work;
          return `${work > this.limit ? RED : GREEN}${num(work, 6)}/s${RESET} ${bar(work / (2 * this.limit), 14)}`;
        }),
      ),
    );
    lines.push(
      row(
        'deferred so far',
        this.systems.map((s) => withTenants(s.recorder.total('deferred'), s.recorder.byTenant('deferred'))),
      ),
    );
    lines.push(
      row(
        'backlog / jobs done',
        this.systems.map((s) => `${withTenants(s.recorder.backlog(), s.recorder.byTenant('backlog'))} / ${s.recorder.total('completed')}`),
      ),
    );
    const moveUp = this.drawnLines > 0 ? `\x1b[${this.drawnLines}F\x1b[J` : '';
    this.out.write(moveUp + lines.join('\n') + '\n');
    this.drawnLines = lines.length;
  }
}

const num = (n, width) => String(n).padStart(width);
/** "16 (importer 12, acme 4)": a count with the tenants it belongs to (the first three). */
function withTenants(total, byTenant) {
  if (byTenant.length === 0) return String(total);
  const named = byTenant.slice(0, 3).map((t) => `${t.name} ${t.count}`);
  return `${total} (${named.join(', ')}${byTenant.length > 3 ? ', …' : ''})`;
}
/** Pads to a visible width, not counting colour codes. */
function pad(text, width) {
  const visible = text.replace(/\x1b\[[0-9;]*m/g, '').length;
  return text + ' '.repeat(Math.max(0, width - visible));
}

module.exports = { LiveView };
