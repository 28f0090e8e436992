/**
 * What a store does with the `config` each admission reply carries (./config-drift.ts, docs/config-drift.md):
 * nothing while it is '' (configs agree: the check cost nothing more); on another fingerprint, one call of its
 * own (`check`: config-check.lua, or the MemoryStore's twin) to publish this process's description and read the
 * other's, then the lines that differ. A fingerprint's options never change (it is their hash), so each one is
 * named once; one not yet described is asked again after RETRY_MS. '+' (this config stored afresh) publishes
 * this description, at most once per REPUBLISH_MS. Pure bookkeeping: the store brings the call and the clock.
 */
import type { ConfigDrift, ConfigMismatch } from '../types';
import { configDiff } from './config-drift';

/** A mismatch no check has seen for this long is over (`mismatch()` answers undefined). */
export const MISMATCH_HOLD_MS = 60_000;
/** A fingerprint whose description was not found is asked again after this long (its process publishes soon). */
const RETRY_MS = 5_000;
/** After this many calls that found no description, the mismatch is reported without its options. */
const NAMELESS_AFTER = 3;
const REPUBLISH_MS = 60_000;
/** Fingerprints named and kept (a deployment mixes a few builds at most). */
const NAMED_MAX = 16;

export interface ConfigWatch extends ConfigDrift {
  /** An admission reply's `config` ('' agrees). Cheap: at most starts one call. */
  saw(config: string): void;
}

export function createConfigWatch(options: {
  /** This process's description (configIdentity). */
  readonly description: string;
  /** Store time, ms. */
  readonly now: () => number;
  /** Publishes this description and answers the one published under `other` ('' = unknown; `other` '' = none asked). */
  readonly check: (other: string) => Promise<string>;
}): ConfigWatch {
  const { description, now, check } = options;
  const listeners: Array<(mismatch: ConfigMismatch) => void> = [];
  // fingerprint → the lines that differ
  const named = new Map<string, readonly string[]>();
  let running: Promise<void> | undefined;
  let publishedAt = -Infinity;
  // the current episode: another fingerprint seen, since when, last seen, asked when and how often
  let current: { other: string; since: number; lastSeen: number; askedAt: number; asked: number; told: boolean } | undefined;

  const tell = (m: NonNullable<typeof current>): void => {
    if (m.told) return;
    m.told = true;
    const mismatch = { options: named.get(m.other) ?? [], since: m.since };
    for (const listener of listeners) listener(mismatch);
  };
  const ask = (other: string): void => {
    running = check(other)
      .then(
        (text) => {
          const m = current;
          if (other === '' || m === undefined || m.other !== other) return;
          if (text !== '') {
            if (named.size >= NAMED_MAX) named.delete(named.keys().next().value as string);
            named.set(other, configDiff(description, text));
          }
          if (text !== '' || m.asked >= NAMELESS_AFTER) tell(m);
        },
        // the store failed: the next reply that sees the other asks again
        () => undefined,
      )
      .finally(() => {
        running = undefined;
      });
  };

  return {
    saw(config) {
      if (config === '') return;
      const t = now();
      if (config === '+') {
        if (running !== undefined || t - publishedAt < REPUBLISH_MS) return;
        publishedAt = t;
        ask('');
        return;
      }
      if (current === undefined || t - current.lastSeen >= MISMATCH_HOLD_MS) {
        current = { other: config, since: t, lastSeen: t, askedAt: -Infinity, asked: 0, told: false };
      } else if (current.other !== config) {
        current = { ...current, other: config, lastSeen: t, askedAt: -Infinity, asked: 0, told: false };
      } else current.lastSeen = t;
      const m = current;
      if (named.has(m.other)) {
        tell(m);
        return;
      }
      if (running !== undefined || t - m.askedAt < RETRY_MS) return;
      m.askedAt = t;
      m.asked++;
      publishedAt = t;
      ask(m.other);
    },
    watch(listener) {
      listeners.push(listener);
    },
    async mismatch() {
      await running;
      const m = current;
      if (m === undefined || now() - m.lastSeen >= MISMATCH_HOLD_MS) return undefined;
      return { options: named.get(m.other) ?? [], since: m.since };
    },
  };
}
