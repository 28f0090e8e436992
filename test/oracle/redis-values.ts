/**
 * Values and argument parsing for the RedisModel: sorted sets in Redis's order, integer and float arguments
 * parsed as strictly as Redis parses them, doubles formatted as Redis 7.0 replies them.
 */

/** A reply as Redis sends it; `{ status }` and `{ error }` are status and error replies. */
export type Reply = number | string | null | Reply[] | { readonly status: string } | { readonly error: string };

export class RedisError extends Error {}

/** Redis's order of members: score, then bytes (latin1 JS strings compare byte-wise). */
export class SortedSet {
  private readonly scores = new Map<string, number>();
  private items: Array<{ member: string; score: number }> = [];

  get size(): number {
    return this.items.length;
  }
  score(member: string): number | undefined {
    return this.scores.get(member);
  }

  add(member: string, score: number): boolean {
    const isNew = !this.scores.has(member);
    if (!isNew) this.remove(member);
    this.scores.set(member, score);
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const it = this.items[mid]!;
      if (it.score < score || (it.score === score && it.member < member)) lo = mid + 1;
      else hi = mid;
    }
    this.items.splice(lo, 0, { member, score });
    return isNew;
  }

  remove(member: string): boolean {
    if (!this.scores.delete(member)) return false;
    this.items = this.items.filter((it) => it.member !== member);
    return true;
  }

  all(): ReadonlyArray<{ member: string; score: number }> {
    return this.items;
  }
}

/** Redis's strict integer argument parsing (string2ll). */
export function int(arg: string | undefined): number {
  if (arg === undefined || !/^(0|-?[1-9][0-9]*)$/.test(arg) || !Number.isSafeInteger(Number(arg))) {
    throw new RedisError('ERR value is not an integer or out of range');
  }
  return Number(arg);
}

/** A score: any strtod float, or ±inf; never NaN. */
export function float(arg: string | undefined): number {
  const s = (arg ?? '').toLowerCase();
  if (s === 'inf' || s === '+inf' || s === 'infinity' || s === '+infinity') return Infinity;
  if (s === '-inf' || s === '-infinity') return -Infinity;
  const n = s.trim() === s && s !== '' ? Number(s) : NaN;
  if (Number.isNaN(n)) throw new RedisError('ERR value is not a valid float');
  return n;
}

/** A ZRANGEBYSCORE bound: a float, '(' for exclusive. */
export function bound(arg: string | undefined): { value: number; open: boolean } {
  const s = arg ?? '';
  if (s.startsWith('(')) return { value: float(s.slice(1)), open: true };
  try {
    return { value: float(s), open: false };
  } catch {
    throw new RedisError('ERR min or max is not a float');
  }
}

/** %.17g, as Redis 7.0 formats a double in a bulk reply (ZSCORE, WITHSCORES). */
export function formatDouble(n: number, precision = 17): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mantissa, expText] = n.toExponential(precision - 1).split('e') as [string, string];
  const exp = Number(expText);
  const strip = (s: string): string => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (exp < -4 || exp >= precision) {
    return `${strip(mantissa)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return strip(n.toFixed(precision - 1 - exp));
}

/** Index range as Redis reads start/stop (negative from the end), clamped; null when empty. */
export function span(len: number, start: number, stop: number): [number, number] | null {
  let a = start < 0 ? len + start : start;
  let b = stop < 0 ? len + stop : stop;
  if (a < 0) a = 0;
  if (b >= len) b = len - 1;
  return a > b || a >= len ? null : [a, b];
}

export function withScores(items: ReadonlyArray<{ member: string; score: number }>, scores: boolean): Reply {
  return scores ? items.flatMap((it) => [it.member, formatDouble(it.score)]) : items.map((it) => it.member);
}
