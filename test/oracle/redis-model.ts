/**
 * A small model of the Redis commands the scripts in lua/ call, on an injected clock. Strings are binary:
 * one JS char per byte (latin1), so packed doubles and any group bytes round-trip. Sorted sets order by score,
 * then by member bytes; keys expire as in Redis 7 (`now > expireAt`, time frozen for the whole script).
 */

import { bound, float, formatDouble, int, RedisError, SortedSet, span, withScores, type Reply } from './redis-values';

export { RedisError, type Reply } from './redis-values';

type Value =
  | { readonly type: 'string'; v: string }
  | { readonly type: 'hash'; readonly v: Map<string, string> }
  | { readonly type: 'zset'; readonly v: SortedSet }
  | { readonly type: 'list'; readonly v: string[] };

interface Entry {
  value: Value;
  expireAt?: number;
}

const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';

export class RedisModel {
  private readonly keys = new Map<string, Entry>();
  /** Frozen for the duration of one script, like Redis's script time snapshot. */
  private nowMs = 0;
  /** Keys found expired so far (tests check that expiry was exercised). */
  expired = 0;

  constructor(private readonly clock: () => number) {}

  /** Starts a script: reads the clock once; every key access and TTL in the script uses this instant. */
  freezeTime(): void {
    this.nowMs = Math.floor(this.clock());
  }

  /** Microseconds for TIME (the clock, unfrozen fractions included, like Redis's TIME inside a script). */
  private timeUs(): number {
    return Math.floor(this.clock() * 1000);
  }

  private entry(key: string): Entry | undefined {
    const e = this.keys.get(key);
    if (e && e.expireAt !== undefined && this.nowMs > e.expireAt) {
      this.keys.delete(key);
      this.expired += 1;
      return undefined;
    }
    return e;
  }

  private read<T extends Value['type']>(key: string, type: T): Extract<Value, { type: T }> | undefined {
    const e = this.entry(key);
    if (!e) return undefined;
    if (e.value.type !== type) throw new RedisError(WRONGTYPE);
    return e.value as Extract<Value, { type: T }>;
  }

  private write<T extends Value['type']>(key: string, type: T, make: () => Extract<Value, { type: T }>): Extract<Value, { type: T }> {
    const found = this.read(key, type);
    if (found) return found;
    const value = make();
    this.keys.set(key, { value });
    return value;
  }

  /** Redis deletes a hash, set or list that becomes empty. */
  private dropIfEmpty(key: string, size: number): void {
    if (size === 0) this.keys.delete(key);
  }

  private hash(key: string): Map<string, string> | undefined {
    return this.read(key, 'hash')?.v;
  }
  private zset(key: string): SortedSet | undefined {
    return this.read(key, 'zset')?.v;
  }
  private list(key: string): string[] | undefined {
    return this.read(key, 'list')?.v;
  }

  /** Runs one command; args are binary strings. Throws RedisError for what Redis answers with an error. */
  call(args: readonly string[]): Reply {
    const name = (args[0] ?? '').toUpperCase();
    const key = args[1] ?? '';
    const rest = args.slice(2);
    const arity = (min: number, even = false): void => {
      if (args.length < min || (even && (args.length - min) % 2 !== 0)) {
        throw new RedisError(`ERR wrong number of arguments for '${name.toLowerCase()}' command`);
      }
    };
    switch (name) {
      case 'TIME': {
        const us = this.timeUs();
        return [String(Math.floor(us / 1e6)), String(us % 1e6)];
      }
      case 'GET':
        arity(2);
        return this.read(key, 'string')?.v ?? null;
      case 'SET':
        return this.set(key, rest);
      case 'DEL':
        arity(2);
        return args.slice(1).filter((k) => this.entry(k) && this.keys.delete(k)).length;
      case 'PEXPIRE':
      case 'EXPIRE': {
        arity(3);
        const e = this.entry(key);
        if (!e) return 0;
        const at = this.nowMs + int(rest[0]) * (name === 'EXPIRE' ? 1000 : 1);
        if (at <= this.nowMs) this.keys.delete(key);
        else e.expireAt = at;
        return 1;
      }
      case 'PTTL': {
        const e = this.entry(key);
        if (!e) return -2;
        return e.expireAt === undefined ? -1 : e.expireAt - this.nowMs;
      }
      case 'HGET':
        arity(3);
        return this.hash(key)?.get(rest[0]!) ?? null;
      case 'HMGET': {
        arity(3);
        const h = this.hash(key);
        return rest.map((f) => h?.get(f) ?? null);
      }
      case 'HEXISTS':
        arity(3);
        return this.hash(key)?.has(rest[0]!) ? 1 : 0;
      case 'HLEN':
        arity(2);
        return this.hash(key)?.size ?? 0;
      case 'HSET': {
        arity(4, true);
        const h = this.write(key, 'hash', () => ({ type: 'hash', v: new Map() })).v;
        let added = 0;
        for (let i = 0; i < rest.length; i += 2) {
          if (!h.has(rest[i]!)) added += 1;
          h.set(rest[i]!, rest[i + 1]!);
        }
        return added;
      }
      case 'HSETNX': {
        arity(4);
        const h = this.write(key, 'hash', () => ({ type: 'hash', v: new Map() })).v;
        if (h.has(rest[0]!)) return 0;
        h.set(rest[0]!, rest[1]!);
        return 1;
      }
      case 'HDEL': {
        arity(3);
        const h = this.hash(key);
        if (!h) return 0;
        const n = rest.filter((f) => h.delete(f)).length;
        this.dropIfEmpty(key, h.size);
        return n;
      }
      case 'HINCRBY': {
        arity(4);
        const by = int(rest[1]);
        const h = this.write(key, 'hash', () => ({ type: 'hash', v: new Map() })).v;
        const old = h.get(rest[0]!);
        let n: number;
        try {
          n = (old === undefined ? 0 : int(old)) + by;
        } catch {
          throw new RedisError('ERR hash value is not an integer');
        }
        h.set(rest[0]!, String(n));
        return n;
      }
      case 'ZADD':
        return this.zadd(key, rest);
      case 'ZREM': {
        arity(3);
        const z = this.zset(key);
        if (!z) return 0;
        const n = rest.filter((m) => z.remove(m)).length;
        this.dropIfEmpty(key, z.size);
        return n;
      }
      case 'ZCARD':
        arity(2);
        return this.zset(key)?.size ?? 0;
      case 'ZSCORE': {
        arity(3);
        const s = this.zset(key)?.score(rest[0]!);
        return s === undefined ? null : formatDouble(s);
      }
      case 'ZRANGE':
      case 'ZREVRANGE':
        return this.zrange(key, rest, name === 'ZREVRANGE');
      case 'ZRANGEBYSCORE':
        return this.zrangeByScore(key, rest);
      case 'ZCOUNT': {
        arity(4);
        const min = bound(rest[0]);
        const max = bound(rest[1]);
        return (this.zset(key)?.all() ?? []).filter(
          ({ score }) => (min.open ? score > min.value : score >= min.value) && (max.open ? score < max.value : score <= max.value),
        ).length;
      }
      case 'ZRANGEBYLEX':
        return this.zrangeByLex(key, rest);
      case 'LLEN':
        arity(2);
        return this.list(key)?.length ?? 0;
      case 'RPUSH':
      case 'LPUSH': {
        arity(3);
        const l = this.write(key, 'list', () => ({ type: 'list', v: [] })).v;
        for (const x of rest) {
          if (name === 'RPUSH') l.push(x);
          else l.unshift(x);
        }
        return l.length;
      }
      case 'LPOP': {
        if (rest.length > 0) throw new RedisError('ERR the oracle models LPOP without a count only');
        const l = this.list(key);
        if (!l) return null;
        const x = l.shift()!;
        this.dropIfEmpty(key, l.length);
        return x;
      }
      case 'LRANGE': {
        arity(4);
        const l = this.list(key) ?? [];
        const s = span(l.length, int(rest[0]), int(rest[1]));
        return s ? l.slice(s[0], s[1] + 1) : [];
      }
      case 'LTRIM': {
        arity(4);
        const l = this.list(key);
        if (l) {
          const s = span(l.length, int(rest[0]), int(rest[1]));
          l.splice(0, l.length, ...(s ? l.slice(s[0], s[1] + 1) : []));
          this.dropIfEmpty(key, l.length);
        }
        return { status: 'OK' };
      }
      case 'LREM': {
        arity(4);
        const l = this.list(key);
        if (!l) return 0;
        const count = int(rest[0]);
        const at: number[] = [];
        l.forEach((x, i) => x === rest[1] && at.push(i));
        const picked = count > 0 ? at.slice(0, count) : count < 0 ? at.slice(count) : at;
        for (const i of picked.reverse()) l.splice(i, 1);
        this.dropIfEmpty(key, l.length);
        return picked.length;
      }
      case 'LPOS': {
        if (rest.length !== 1) throw new RedisError('ERR the oracle models LPOS without options only');
        const at = (this.list(key) ?? []).indexOf(rest[0]!);
        return at < 0 ? null : at;
      }
      default:
        throw new RedisError(`ERR unknown command '${name}' (not modelled by the oracle)`);
    }
  }

  private set(key: string, rest: string[]): Reply {
    if (rest.length < 1) throw new RedisError("ERR wrong number of arguments for 'set' command");
    let ttl: number | undefined;
    let nx = false;
    let xx = false;
    for (let i = 1; i < rest.length; i++) {
      const opt = rest[i]!.toUpperCase();
      if (opt === 'PX' || opt === 'EX') {
        const n = int(rest[++i]);
        if (n <= 0) throw new RedisError("ERR invalid expire time in 'set' command");
        ttl = opt === 'EX' ? n * 1000 : n;
      } else if (opt === 'NX') nx = true;
      else if (opt === 'XX') xx = true;
      else throw new RedisError('ERR syntax error');
    }
    const exists = this.entry(key) !== undefined;
    if ((nx && exists) || (xx && !exists)) return null;
    this.keys.set(key, { value: { type: 'string', v: rest[0]! }, ...(ttl !== undefined ? { expireAt: this.nowMs + ttl } : {}) });
    return { status: 'OK' };
  }

  private zadd(key: string, rest: string[]): Reply {
    if (rest.length < 2 || rest.length % 2 !== 0) {
      if (rest.length > 0 && /^(NX|XX|GT|LT|CH|INCR)$/i.test(rest[0]!)) throw new RedisError('ERR the oracle models ZADD without flags only');
      throw new RedisError("ERR wrong number of arguments for 'zadd' command");
    }
    const pairs: Array<[number, string]> = [];
    for (let i = 0; i < rest.length; i += 2) pairs.push([float(rest[i]), rest[i + 1]!]);
    const z = this.write(key, 'zset', () => ({ type: 'zset', v: new SortedSet() })).v;
    return pairs.filter(([score, member]) => z.add(member, score)).length;
  }

  private zrange(key: string, rest: string[], reverse: boolean): Reply {
    if (rest.length < 2 || rest.length > 3 || (rest.length === 3 && rest[2]!.toUpperCase() !== 'WITHSCORES')) {
      throw new RedisError('ERR the oracle models ZRANGE/ZREVRANGE start stop [WITHSCORES] only');
    }
    const items = [...(this.zset(key)?.all() ?? [])];
    if (reverse) items.reverse();
    const s = span(items.length, int(rest[0]), int(rest[1]));
    return withScores(s ? items.slice(s[0], s[1] + 1) : [], rest.length === 3);
  }

  /** ZRANGEBYLEX key min max [LIMIT offset count]: bounds '[x' / '(x' / '-' / '+', members compared byte-wise. */
  private zrangeByLex(key: string, rest: string[]): Reply {
    const lex = (b: string | undefined, low: boolean): ((m: string) => boolean) => {
      if (b === '-') return () => low;
      if (b === '+') return () => !low;
      if (b === undefined || (b[0] !== '[' && b[0] !== '(')) throw new RedisError('ERR min or max not valid string range item');
      const v = b.slice(1);
      const open = b[0] === '(';
      return low ? (m) => (open ? m > v : m >= v) : (m) => (open ? m < v : m <= v);
    };
    const above = lex(rest[0], true);
    const below = lex(rest[1], false);
    let offset = 0;
    let count = -1;
    if (rest.length === 5 && rest[2]!.toUpperCase() === 'LIMIT') {
      offset = int(rest[3]);
      count = int(rest[4]);
    } else if (rest.length !== 2) throw new RedisError('ERR syntax error');
    const inRange = (this.zset(key)?.all() ?? []).map(({ member }) => member).filter((m) => above(m) && below(m));
    return inRange.slice(offset, count < 0 ? undefined : offset + count);
  }

  private zrangeByScore(key: string, rest: string[]): Reply {
    const min = bound(rest[0]);
    const max = bound(rest[1]);
    let scores = false;
    let offset = 0;
    let count = -1;
    for (let i = 2; i < rest.length; i++) {
      const opt = rest[i]!.toUpperCase();
      if (opt === 'WITHSCORES') scores = true;
      else if (opt === 'LIMIT' && i + 2 < rest.length) {
        offset = int(rest[i + 1]);
        count = int(rest[i + 2]);
        i += 2;
      } else throw new RedisError('ERR syntax error');
    }
    const inRange = (this.zset(key)?.all() ?? []).filter(
      ({ score }) => (min.open ? score > min.value : score >= min.value) && (max.open ? score < max.value : score <= max.value),
    );
    if (offset < 0) return [];
    return withScores(inRange.slice(offset, count < 0 ? undefined : offset + count), scores);
  }
}
