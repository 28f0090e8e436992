import { DEFAULT_LEASE_MS } from '../../src/core/concurrency';
import { DEFAULT_MAX_GROUPS } from '../../src/core/fair-share';
import type { LimiterSpec } from '../../src/types';

/** The resolved settings createLimiter fills in when the options leave them out (probation off here). */
export const SPEC_DEFAULTS = { maxGroups: DEFAULT_MAX_GROUPS, probationMs: 0, concurrencyLeaseMs: DEFAULT_LEASE_MS } as const;

type Defaulted = keyof typeof SPEC_DEFAULTS;

/** A whole LimiterSpec from the fields a test cares about. */
export const fullSpec = (spec: Omit<LimiterSpec, Defaulted> & Partial<Pick<LimiterSpec, Defaulted>>): LimiterSpec => ({ ...SPEC_DEFAULTS, ...spec });
