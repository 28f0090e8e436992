/**
 * What a store does with the `config` each admission reply carries (./config-drift.ts, docs/operations.md "Config drift"):
 * nothing while it is '' and no naming is pending (configs agree: a check costs nothing more); on another
 * fingerprint, one call of its own (`check`: config-check.lua, or the MemoryStore's twin) to publish this
 * process's description and read the other's, then the lines that differ. A fingerprint's options never change
 * (it is their hash), so each is named once; one not described yet is asked again by a check at least RETRY_MS
 * later (its process describes itself when its next check sees this one, which the call stored for it).
 * Pure bookkeeping: the store brings the call and the clock.
 */
import type { ConfigDrift, ConfigMismatch } from '../types';
import { configDiff } from './config-drift';

/** A mismatch no check has seen for this long is over (`mismatch()` answers undefined). */
export const MISMATCH_HOLD_MS = 60_000;
/** A fingerprint whose description was not found is asked again after this long. */
export const RETRY_MS = 5_000;
/** After this many calls that found no description, the mismatch is told without its options (asks stop). */
const MAX_ASKS = 12;
/** Fingerprints named and kept (a deployment mixes a few builds at most). */
const NAMED_MAX = 16;

export interface ConfigWatch extends ConfigDrift {
  /** An admission reply's `config` ('' agrees). Cheap: at most starts one call. */
  saw(config: string): void;
}

interface Episode {
  other: string;
  since: number;
  lastSeen: number;
  askedAt: number;
  asked: number;
  told: boolean;
}

export function createConfigWatch(options: {
  /** This process's description (configIdentity). */
  readonly description: string;
  /** Store time, ms. */
  readonly now: () => number;
  /** Publishes this description and answers the one published under `other` ('' = not described yet). */
  readonly check: (other: string) => Promise<string>;
}): ConfigWatch {
  const { description, now, check } = options;
  const listeners: Array<(mismatch: ConfigMismatch) => void> = [];
  // fingerprint → the lines that differ
  const named = new Map<string, readonly string[]>();
  let running: Promise<void> | undefined;
  let current: Episode | undefined;
  // an episode whose other config is not named yet: checks ask again
  let pending = false;

  const tell = (m: Episode): void => {
    pending = false;
    if (m.told) return;
    m.told = true;
    const mismatch = { options: named.get(m.other) ?? [], since: m.since };
    for (const listener of listeners) listener(mismatch);
  };
  const ask = (m: Episode, t: number): void => {
    m.askedAt = t;
    m.asked++;
    const other = m.other;
    running = check(other)
      .then(
        (text) => {
          if (text !== '') {
            if (named.size >= NAMED_MAX) named.delete(named.keys().next().value as string);
            named.set(other, configDiff(description, text));
          }
          if (current === m && m.other === other && (text !== '' || m.asked >= MAX_ASKS)) tell(m);
        },
        // the store failed: a later check asks again
        () => undefined,
      )
      .finally(() => {
        running = undefined;
      });
  };

  return {
    saw(config) {
      if (config === '' && !pending) return;
      const t = now();
      if (config !== '') {
        if (current === undefined || t - current.lastSeen >= MISMATCH_HOLD_MS) {
          current = { other: config, since: t, lastSeen: t, askedAt: -Infinity, asked: 0, told: false };
        } else if (current.other !== config) {
          current = { ...current, other: config, lastSeen: t, askedAt: -Infinity, asked: 0, told: false };
        } else current.lastSeen = t;
      }
      const m = current;
      if (m === undefined) return;
      if (named.has(m.other)) {
        tell(m);
        return;
      }
      pending = m.asked < MAX_ASKS;
      if (running === undefined && pending && t - m.askedAt >= RETRY_MS) ask(m, t);
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
