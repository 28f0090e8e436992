/**
 * Rate-limit response headers from a Decision. Pure and cheap: everything that does not change per request
 * (the policy name, the window in seconds) is formatted once, when the writer is made.
 *
 * - `'draft'` (default): `RateLimit-Policy: "<name>";q=<quota>;w=<window s>` and
 *   `RateLimit: "<name>";r=<remaining>;t=<seconds>` (draft-ietf-httpapi-ratelimit-headers -08 … -11 syntax).
 *   `q` is the group's current quota (its fair share, with borrowing), not the global capacity.
 * - `'legacy'`: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` where Reset is the
 *   epoch second at which the quota is full again (the GitHub convention), on the store's clock.
 * - `false`: no rate-limit fields. `Retry-After` is still sent on a denial: clients need it.
 *
 * On a denial `Retry-After` = max(1, ceil(retryAfterMs / 1000)) whole seconds, and the draft `t` equals it
 * (no quota is available until then), so Retry-After never points before the end of the effective window.
 *
 * With rules, the draft fields carry one item per policy: the limiter's own (the global share, named by the
 * limiter) first, then each rule by its name, `q` its limit, `w` its window; on a denial the `t` of the policy
 * that said no is the Retry-After. The legacy fields describe the global share only. A decision under an
 * override (docs/runtime-policies.md) carries the override's rules, and its fields name those (none when blocked).
 *
 * The draft's `w` is whole seconds. A window that is not (100 ms, 1.5 s) is stated over the shortest whole number of
 * seconds that holds whole windows, its quota scaled to match: `limit: 100, windowMs: 100` is `q=1000;w=1`,
 * `windowMs: 1500` is `q=200;w=3` (never `q=100;w=1`, which would state a tenth of the rate).
 *
 * With priority classes (`decision.class`), the limiter's policy item carries `;class="<name>"`.
 *
 * With a concurrency cap (`decision.concurrency`), the draft fields end with a `"concurrency"` item: `q` the cap,
 * `r` the slots left after this request, `t` the Retry-After when the cap said no (else 0). No `w`: it is not a window.
 */
import type { RuleSpec } from '../types';
import type { Decision } from '../types';

export type HeaderFormat = 'draft' | 'legacy' | false;

/** Header name → value, ready for `res.setHeader` / `ctx.set` / `err.headers`. */
export type HeaderMap = Record<string, string>;

/** Formats the headers of one limiter. `withQuota: false` leaves out quota fields (store outage, no real numbers). */
export type HeaderWriter = (decision: Decision, withQuota?: boolean) => HeaderMap;

/** Whole seconds, at least 1, that a denied client should wait. */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}

/** Waits up to this many seconds keep their text (a few KiB per limiter); longer ones are made each time. */
const CACHED_SECONDS = 128;

/** `make(seconds)`, kept for the whole seconds below CACHED_SECONDS (the strings a flood's denials repeat). */
export function cachedBySeconds(make: (seconds: number) => string): (seconds: number) => string {
  const made: string[] = [];
  return (seconds) => {
    if (seconds >= CACHED_SECONDS || !Number.isInteger(seconds) || seconds < 0) return make(seconds);
    return (made[seconds] ??= make(seconds));
  };
}

const quote = (name: string): string => `"${name.replace(/[\\"]/g, '\\$&')}"`;

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** The draft window of `windowMs`: `w` whole seconds holding `perWindow` whole windows (see the file comment). */
export function draftWindow(windowMs: number): { readonly w: number; readonly perWindow: number } {
  const g = gcd(windowMs, 1000);
  return { w: windowMs / g, perWindow: 1000 / g };
}

export function createHeaderWriter(format: HeaderFormat, policyName: string, windowMs: number, rules: readonly RuleSpec[] = []): HeaderWriter {
  const write = rateHeaderWriter(format, policyName, windowMs, rules);
  return format === 'draft' ? withClass(withConcurrency(write)) : write;
}

/**
 * With priority classes, the limiter's own policy item says the class its quota was decided in: a `class`
 * parameter (`"api";q=200;w=1;class="critical"`; the draft's recipients ignore parameters they do not know).
 */
function withClass(write: HeaderWriter): HeaderWriter {
  return (d, withQuota = true) => {
    const h = write(d, withQuota);
    const policy = h['RateLimit-Policy'];
    if (d.class === undefined || policy === undefined) return h;
    // the first item is the limiter's (names never hold ', ': limiter and rule names are [A-Za-z0-9._-:/])
    const end = policy.indexOf(', ');
    const param = `;class=${quote(d.class)}`;
    h['RateLimit-Policy'] = end < 0 ? policy + param : policy.slice(0, end) + param + policy.slice(end);
    return h;
  };
}

/** Appends the concurrency item to the draft fields of a decision with a cap (see the file comment). */
function withConcurrency(write: HeaderWriter): HeaderWriter {
  return (d, withQuota = true) => {
    const h = write(d, withQuota);
    const slots = d.concurrency;
    if (slots === undefined || h.RateLimit === undefined) return h;
    const t = d.allowed || d.policy !== 'concurrency' ? 0 : retryAfterSeconds(d.retryAfterMs);
    h['RateLimit-Policy'] += `, "concurrency";q=${slots.limit}`;
    h.RateLimit += `, "concurrency";r=${Math.max(0, slots.limit - slots.inFlight)};t=${t}`;
    return h;
  };
}

function rateHeaderWriter(format: HeaderFormat, policyName: string, windowMs: number, rules: readonly RuleSpec[]): HeaderWriter {
  const { w, perWindow } = draftWindow(windowMs);
  // The policy name is a Structured-Field String: escape `\` and `"` (limiter names never contain them anyway).
  const quoted = quote(policyName);
  const policySuffix = `;w=${w}`;

  if (format === 'draft') {
    const configured = rules.length > 0 ? draftWithRules(quoted, policySuffix, perWindow, rules) : draftShare(quoted, policySuffix, perWindow);
    // a decision under an override names rules of its own (or none, when blocked): its fields follow them
    return (d, withQuota) =>
      sameRules(d, rules) ? configured(d, withQuota) : draftWithRules(quoted, policySuffix, perWindow, d.rules ?? [])(d, withQuota);
  }
  if (format === 'legacy') {
    return (d, withQuota = true) => {
      const h: HeaderMap = withQuota
        ? {
            'X-RateLimit-Limit': String(d.limit),
            'X-RateLimit-Remaining': String(d.remaining),
            'X-RateLimit-Reset': String(Math.ceil((d.at + d.resetMs) / 1000)),
          }
        : {};
      if (!d.allowed) h['Retry-After'] = String(retryAfterSeconds(d.retryAfterMs));
      return h;
    };
  }
  return (d): HeaderMap => (d.allowed ? {} : { 'Retry-After': String(retryAfterSeconds(d.retryAfterMs)) });
}

/**
 * Whether the decision's rules are the configured ones (by name, in order): a check without an override. A decision
 * without rule statuses (an outage policy's, or an override's with `rules: []`) is written as configured, but a block.
 */
function sameRules(d: Decision, rules: readonly RuleSpec[]): boolean {
  const own = d.rules;
  if (own === undefined || own.length === 0) return rules.length === 0 || d.policy !== 'blocked';
  if (own.length !== rules.length) return false;
  for (let i = 0; i < own.length; i++) if (own[i]!.name !== rules[i]!.name) return false;
  return true;
}

/** Draft fields of the global share alone. */
function draftShare(quoted: string, policySuffix: string, perWindow: number): HeaderWriter {
  // RateLimit-Policy changes only with the group's quota, the same for most requests in a row: formatted once per quota.
  let policyLimit = -1;
  let policy = '';
  const policyOf = (limit: number): string => {
    if (limit !== policyLimit) {
      policy = `${quoted};q=${limit * perWindow}${policySuffix}`;
      policyLimit = limit;
    }
    return policy;
  };
  // So do RateLimit (a flood's denials all say r=0 and the same t) and Retry-After: the last ones are kept.
  let stateRemaining = -1;
  let stateT = -1;
  let state = '';
  const stateOf = (remaining: number, t: number): string => {
    if (remaining !== stateRemaining || t !== stateT) {
      state = `${quoted};r=${remaining};t=${t}`;
      stateRemaining = remaining;
      stateT = t;
    }
    return state;
  };
  // a denial's: it leaves nothing (r=0) and waits its Retry-After, one of a few whole seconds
  const deniedStateOf = cachedBySeconds((t) => `${quoted};r=0;t=${t}`);
  const retryOf = cachedBySeconds(String);
  return (d, withQuota = true): HeaderMap => {
    if (d.allowed) {
      return withQuota ? { 'RateLimit-Policy': policyOf(d.limit), RateLimit: stateOf(d.remaining, Math.ceil(d.resetMs / 1000)) } : {};
    }
    const retry = retryAfterSeconds(d.retryAfterMs);
    return withQuota
      ? {
          'Retry-After': retryOf(retry),
          'RateLimit-Policy': policyOf(d.limit),
          RateLimit: d.remaining === 0 ? deniedStateOf(retry) : stateOf(d.remaining, retry),
        }
      : { 'Retry-After': retryOf(retry) };
  };
}

/** Draft fields with one item per policy: the global share's, then each rule's (see the file comment). */
function draftWithRules(
  quoted: string,
  policySuffix: string,
  perWindow: number,
  rules: ReadonlyArray<Pick<RuleSpec, 'name' | 'limit' | 'windowMs'>>,
): HeaderWriter {
  const names = rules.map((r) => quote(r.name));
  const rulePolicies = rules
    .map((r, i) => {
      const window = draftWindow(r.windowMs);
      return `, ${names[i]!};q=${r.limit * window.perWindow};w=${window.w}`;
    })
    .join('');
  return (d, withQuota = true): HeaderMap => {
    const retry = d.allowed ? 0 : retryAfterSeconds(d.retryAfterMs);
    if (!withQuota) return d.allowed ? {} : { 'Retry-After': String(retry) };
    const violated = d.allowed ? undefined : (d.policy ?? 'global');
    const shareSaidNo = violated === 'global' || violated === 'blocked';
    let state = `${quoted};r=${d.remaining};t=${shareSaidNo ? retry : Math.ceil(d.resetMs / 1000)}`;
    const statuses = d.rules ?? [];
    for (let i = 0; i < rules.length; i++) {
      const st = statuses[i];
      const t = violated === rules[i]!.name ? retry : Math.ceil((st?.resetMs ?? 0) / 1000);
      state += `, ${names[i]!};r=${st?.remaining ?? rules[i]!.limit};t=${t}`;
    }
    const h: HeaderMap = { 'RateLimit-Policy': `${quoted};q=${d.limit * perWindow}${policySuffix}${rulePolicies}`, RateLimit: state };
    return d.allowed ? h : { 'Retry-After': String(retry), ...h };
  };
}
