import { DEFAULT_LEASE_MS } from '../../src/core/concurrency';
import { DEFAULT_MAX_GROUPS } from '../../src/core/fair-share-state';
import type { LimiterSpec } from '../../src/types';

/** The resolved settings createLimiter fills in when the options leave them out (probation off here): spread into a test's hand-built LimiterSpec. */
export const SPEC_DEFAULTS = {
  maxGroups: DEFAULT_MAX_GROUPS,
  probationMs: 0,
  concurrencyLeaseMs: DEFAULT_LEASE_MS,
} as const satisfies Partial<LimiterSpec>;
