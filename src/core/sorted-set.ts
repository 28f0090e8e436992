/**
 * A small in-memory sorted set with Redis ZSET order: by score, ties by member (code-unit order,
 * like Redis byte order for ASCII). Sorted array + map: O(log n) find, O(n) insert/remove (memmove).
 */
export interface ScoredMember {
  readonly member: string;
  readonly score: number;
}

function before(a: ScoredMember, score: number, member: string): boolean {
  return a.score < score || (a.score === score && a.member < member);
}

export class SortedSet {
  private readonly items: ScoredMember[] = [];
  private readonly scores = new Map<string, number>();

  get size(): number {
    return this.items.length;
  }

  clear(): void {
    this.items.length = 0;
    this.scores.clear();
  }

  score(member: string): number | undefined {
    return this.scores.get(member);
  }

  private indexOf(score: number, member: string): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.items[mid]!, score, member)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  add(member: string, score: number): void {
    this.remove(member);
    this.items.splice(this.indexOf(score, member), 0, { member, score });
    this.scores.set(member, score);
  }

  remove(member: string): boolean {
    const score = this.scores.get(member);
    if (score === undefined) return false;
    this.items.splice(this.indexOf(score, member), 1);
    this.scores.delete(member);
    return true;
  }

  /** Members ranked [start, start + count). */
  range(start: number, count: number): ScoredMember[] {
    return this.items.slice(start, start + count);
  }

  /** Up to `count` members with score ≤ max, lowest first. */
  rangeToScore(max: number, count: number): ScoredMember[] {
    const out: ScoredMember[] = [];
    for (const item of this.items) {
      if (item.score > max || out.length >= count) break;
      out.push(item);
    }
    return out;
  }

  first(): ScoredMember | undefined {
    return this.items[0];
  }

  /** The lowest member of score `score` that starts with `prefix` (ZRANGEBYLEX [prefix … LIMIT 0 1). */
  firstWithPrefix(score: number, prefix: string): string | undefined {
    const item = this.items[this.indexOf(score, prefix)];
    return item && item.score === score && item.member.startsWith(prefix) ? item.member : undefined;
  }

  /** Highest score first, from rank `start` counted from the top. */
  rangeReverse(start: number, count: number): ScoredMember[] {
    const end = this.items.length - start;
    return this.items.slice(Math.max(0, end - count), Math.max(0, end)).reverse();
  }
}
