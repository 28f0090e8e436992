/**
 * The one check of option names: every public entry point (createLimiter, bulkLimiter, check, jobStatus,
 * Dispatcher, Worker) refuses a name it does not know with ConfigError ERR_BL_UNKNOWN_OPTION, and says
 * which option was probably meant: a close misspelling, or the name another package uses for it
 * (express-rate-limit, rate-limiter-flexible, BullMQ).
 */
import { ConfigError } from '../errors';

/** A map with every key of T, so a list of option names cannot miss one (express-rate-limit's KeysEnum). */
export type OptionNames<T> = { readonly [K in keyof Required<T>]: true };

/** Names other packages use → ours, most likely first (the first one the caller knows is suggested). */
const FOREIGN_NAMES: Readonly<Record<string, readonly string[]>> = {
  // express-rate-limit
  max: ['limit', 'maxAttempts'],
  keyGenerator: ['group'],
  handler: ['onLimit'],
  message: ['onLimit'],
  statusCode: ['onLimit'],
  standardHeaders: ['headers'],
  legacyHeaders: ['headers'],
  passOnStoreError: ['onStoreError'],
  // rate-limiter-flexible
  points: ['limit', 'cost'],
  duration: ['windowMs'],
  keyPrefix: ['prefix', 'name'],
  storeClient: ['store'],
  insuranceLimiter: ['onStoreError'],
  // BullMQ
  attempts: ['maxAttempts'],
  lockDuration: ['leaseMs'],
  lockRenewTime: ['leaseMs'],
  stalledInterval: ['reclaimIntervalMs', 'leaseMs'],
  maxStalledCount: ['maxStalls'],
  removeOnComplete: ['keepCompletedMs'],
  drainDelay: ['idleWaitMs', 'pollMs'],
  connection: ['limiter', 'store'],
  processor: ['handlers'],
  // everyday names
  window: ['windowMs'],
  interval: ['windowMs'],
  timeout: ['timeoutMs'],
  key: ['group'],
  tenant: ['group'],
  tier: ['weight'],
  paramName: ['param'],
  routeParam: ['param'],
  idParam: ['param'],
  isPublic: ['public'],
};

/**
 * Throws ConfigError ERR_BL_UNKNOWN_OPTION for the first key of `options` not in `known`. `where` names the
 * call in the message (`createLimiter()`), `prefix` a nested object (`denyCache.`); `nested` lists the names inside
 * object options (`{ tuning: ['burst', …] }`), suggested as `tuning.burst`. A non-object is left to the caller's own check.
 */
export function refuseUnknownOptions(
  options: unknown,
  known: readonly string[],
  where: string,
  prefix = '',
  nested: Readonly<Record<string, readonly string[]>> = {},
): void {
  if (typeof options !== 'object' || options === null) return;
  for (const key in options) {
    if (!Object.prototype.hasOwnProperty.call(options, key) || known.includes(key)) continue;
    // a name that lives inside an object option (`tuning.burst`) is suggested there
    const parent = Object.keys(nested).find((name) => nested[name]?.includes(key));
    const guess = parent === undefined ? suggestOption(key, known) : `${parent}.${key}`;
    throw new ConfigError(
      'ERR_BL_UNKNOWN_OPTION',
      `Unknown option \`${prefix}${key}\` of ${where}${guess === undefined ? '.' : `; did you mean \`${prefix}${guess}\`?`} Known options: ${known.join(', ')}`,
    );
  }
}

/** The option `name` probably meant: another package's name for it, a case slip, or one or two typos away. */
export function suggestOption(name: string, known: readonly string[]): string | undefined {
  const foreign = Object.prototype.hasOwnProperty.call(FOREIGN_NAMES, name) ? FOREIGN_NAMES[name] : undefined;
  const mapped = foreign?.find((candidate) => known.includes(candidate));
  if (mapped !== undefined) return mapped;
  const lower = name.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase !== undefined) return sameCase;
  let best: string | undefined;
  let bestDistance = name.length <= 4 ? 1 : 2;
  for (const candidate of known) {
    const d = editDistance(lower, candidate.toLowerCase(), bestDistance);
    if (d < bestDistance || (d === bestDistance && best === undefined)) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance (a swap counts as one edit); anything above `max` is reported as max + 1. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      current.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > max) return max + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? max + 1;
}
