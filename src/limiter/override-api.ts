/**
 * The limiter's overrides (docs/runtime-policies.md): setOverride, getOverride, deleteOverride and listOverrides,
 * each checked here (./override-options.ts) and one store call through the outage guard. The store reads an
 * override in the same call as each decision (lua/includes/overrides.lua); checks never read a copy in the process.
 * With `onStoreError: 'local'` each answer is also noted (./outage/known-overrides.ts) for the fallback.
 */
import { ConfigError } from '../errors';
import type { LimiterStore, PlanSpec } from '../types';
import type { DenyCache } from './deny-cache';
import { checkGroup } from './group-id';
import type { Limiter } from './limiter-api';
import type { KnownOverrides } from './outage/known-overrides';
import type { OutageGuard } from './outage/outage';
import { resolveListOptions, resolveOverride, toOverride } from './override-options';

export type OverrideApi = Pick<Limiter, 'setOverride' | 'getOverride' | 'deleteOverride' | 'listOverrides'>;

export interface OverrideApiParts {
  readonly store: LimiterStore;
  readonly guard: Pick<OutageGuard, 'call'>;
  /** The limiter's name, for the error that says it holds too many. */
  readonly name: string;
  readonly plans: ReadonlyMap<string, PlanSpec> | undefined;
  readonly maxWeight: number;
  readonly maxGroupLength: number;
  readonly maxOverrides: number;
  /** This process's cached denials: a group's is forgotten when its override changes. */
  readonly denyCache: DenyCache | undefined;
  /** The overrides the `'local'` outage fallback applies: what these calls wrote and read. */
  readonly known?: KnownOverrides | undefined;
}

export function createOverrideApi(parts: OverrideApiParts): OverrideApi {
  const { store, guard, name, plans, maxWeight, maxGroupLength, maxOverrides, denyCache, known } = parts;
  return {
    setOverride: async (group, settings, opts) => {
      checkGroup(group, maxGroupLength);
      const { text, ttlMs, spanMs } = resolveOverride(settings, opts, { plans, maxWeight });
      const set = overridesOf(store).setOverride;
      const write = await guard.call(() => set({ group, settings: text, ttlMs, maxOverrides, spanMs }));
      if (!write.written) {
        throw new ConfigError(
          'ERR_BL_TOO_MANY_OVERRIDES',
          `Limiter ${name} holds ${write.held} overrides, its \`tuning.maxOverrides\` (${maxOverrides}): delete one first, or raise the option`,
        );
      }
      // this process's cached denial of the group; another's holds at most until its hint
      denyCache?.forget(group);
      const stored = `${write.expiresMs}|${write.setMs}|${text}`;
      known?.stored(group, stored);
      return toOverride(group, stored)!;
    },
    getOverride: async (group) => {
      checkGroup(group, maxGroupLength);
      const get = overridesOf(store).getOverride;
      const raw = await guard.call(() => get(group));
      known?.stored(group, raw);
      return raw === undefined ? null : (toOverride(group, raw) ?? null);
    },
    deleteOverride: async (group) => {
      checkGroup(group, maxGroupLength);
      const del = overridesOf(store).deleteOverride;
      const had = await guard.call(() => del(group));
      denyCache?.forget(group);
      known?.stored(group, undefined);
      return had;
    },
    listOverrides: async (opts) => {
      const { cursor, count } = resolveListOptions(opts);
      const list = overridesOf(store).listOverrides;
      const page = await guard.call(() => list(cursor, count));
      const overrides = page.flatMap(([group, raw]) => toOverride(group, raw) ?? []);
      const last = page.length < count || page.length === 0;
      // the whole list on one page says what is gone too
      if (known !== undefined) {
        if (cursor === '' && last) known.storedAll(page);
        else for (const [group, raw] of page) known.stored(group, raw);
      }
      return last ? { overrides } : { overrides, cursor: page[page.length - 1]![0] };
    },
  };
}

/** The store's override operations; a store without them cannot hold overrides. */
function overridesOf(store: LimiterStore): Required<Pick<LimiterStore, 'setOverride' | 'getOverride' | 'deleteOverride' | 'listOverrides'>> {
  const { setOverride, getOverride, deleteOverride, listOverrides } = store;
  if (!setOverride || !getOverride || !deleteOverride || !listOverrides) {
    throw new ConfigError('ERR_BL_NO_OVERRIDES', 'Expected a store that can hold overrides (RedisStore, MemoryStore)');
  }
  return {
    setOverride: setOverride.bind(store),
    getOverride: getOverride.bind(store),
    deleteOverride: deleteOverride.bind(store),
    listOverrides: listOverrides.bind(store),
  };
}
