/**
 * The overrides this process knows, for the `'local'` outage fallback (docs/runtime-policies.md): the ones it last
 * wrote or read (setOverride, getOverride, deleteOverride, listOverrides) and the blocks its store decisions showed
 * (`policy: 'blocked'`), at most `tuning.maxOverrides`. While the store is unreachable the fallback decides under
 * them, so a blocked tenant stays blocked. A copy, not the truth: another process's change reaches it only through
 * this process's reads, or, for a block, the group's next decision.
 */
import { parseOverrideValue } from '../../core/overrides';
import { rlConfig } from '../../core/rules';
import type { Decision } from '../../types';

/** A block learnt from a decision: what setOverride stores for `{ blocked: true }`. */
const BLOCKED = JSON.stringify({ b: 1, s: { blocked: true } });

/** One override to write into the fallback's store (an OverrideInput without the cap). */
export interface KnownOverride {
  readonly group: string;
  readonly settings: string;
  readonly ttlMs: number;
  readonly spanMs: number;
}

export class KnownOverrides {
  /** group → stored value, '<expiresMs>|<setMs>|<settings JSON>'; Map order: oldest news first. */
  private readonly entries = new Map<string, string>();
  /** Groups whose entry blocks them. */
  private readonly blocking = new Set<string>();

  constructor(
    readonly max: number,
    private readonly windowMs: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The group's override as the store holds it (a write's or a read's value); undefined: it has none. */
  stored(group: string, raw: string | undefined): void {
    this.forget(group);
    const parsed = raw === undefined ? undefined : parseOverrideValue(raw);
    if (parsed === undefined) return;
    // the oldest news goes first: the store holds at most `max`, so this only trims what another process removed
    if (this.entries.size >= this.max) this.forget(this.entries.keys().next().value!);
    this.entries.set(group, raw!);
    if (parsed.record.b === 1) this.blocking.add(group);
  }

  /** A complete list read from the store: everything else is gone. */
  storedAll(list: ReadonlyArray<readonly [string, string]>): void {
    this.entries.clear();
    this.blocking.clear();
    for (const [group, raw] of list) this.stored(group, raw);
  }

  /**
   * A decision the store made: a block is learnt (it ends `retryAfterMs` after the decision; one window is what a
   * block without ttl says, taken as no end), and a block the store no longer applies is dropped (what replaced it,
   * if anything, is not known).
   */
  decided(d: Decision): void {
    if (d.policy === 'blocked') {
      if (this.blocking.has(d.group)) return;
      const expires = d.retryAfterMs === this.windowMs ? 0 : d.at + d.retryAfterMs;
      this.stored(d.group, `${expires}|${d.at}|${BLOCKED}`);
    } else if (this.blocking.size > 0 && this.blocking.has(d.group)) {
      this.forget(d.group);
    }
  }

  /** The overrides in force at `nowMs`, as the fallback's store takes them. */
  inForce(nowMs: number): KnownOverride[] {
    const out: KnownOverride[] = [];
    for (const [group, raw] of this.entries) {
      const parsed = parseOverrideValue(raw);
      if (!parsed) continue;
      const { expiresMs, record } = parsed;
      if (expiresMs > 0 && expiresMs <= nowMs) continue;
      const spanMs = record.rs === undefined ? 0 : rlConfig(record.rs)[1];
      out.push({ group, settings: raw.slice(raw.indexOf('|', raw.indexOf('|') + 1) + 1), ttlMs: expiresMs > 0 ? expiresMs - nowMs : 0, spanMs });
    }
    return out;
  }

  private forget(group: string): void {
    this.entries.delete(group);
    this.blocking.delete(group);
  }
}
