/**
 * The oracle against a real redis-server: the same probe scripts, the same replies. These pin what the
 * oracle claims about Redis's Lua 5.1 (number printing, %d, reply conversion, cjson, struct, the sandbox)
 * and about the commands the scripts use (score formatting, ranges, limits, missing values).
 */
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { OracleRedis } from './oracle-client';

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
});
afterAll(async () => {
  await server.stop();
});

type Outcome = { value: unknown } | { error: true };
const settle = (p: Promise<unknown>): Promise<Outcome> =>
  p.then(
    (value) => ({ value }),
    () => ({ error: true }) as const,
  );

const PROBES: Array<[string, string, string[]?]> = [
  [
    'reply conversion: numbers truncated, arrays up to the first nil, false as nil, nested status',
    "return { 1.9, -1.9, 'a', true, false, { ok = 'fine' }, { 2.5, { 'deep' } }, nil, 'after nil' }",
  ],
  ['an error table is an error reply', "return { err = 'boom' }"],
  ['a status table is a status reply', "return { ok = 'fine' }"],
  ['numbers as Lua 5.1 prints them', "return { tostring(3 / 1), 1.5 .. '', tostring(1 / 3), tostring(-0.5), tostring(2^53) }"],
  [
    '%d truncates a double of any size',
    "return { string.format('%d', 2.7), string.format('%d', -2.7), string.format('%d-%06d', 1700000000123, 7), string.format('%d:%d %%', 1e15, 3) }",
  ],
  [
    'unpack is global; tonumber of data',
    "local a, b = unpack({ 1, 2 }); return { a + b, tonumber('1700000000000') * 1000 % 7, tonumber('0.5') * 3, #ARGV }",
    ['x', 'y'],
  ],
  ['cjson numbers, escapes and an empty table', "return cjson.encode({ 1.5, 1700000000000, 0.1, 'x/y', '\"q\"', 'tab\\t', {} })"],
  [
    'cjson decode: unicode escapes become UTF-8, numbers doubles',
    'local t = cjson.decode(\'{"s":"\\\\u00e9\\\\/","n":3,"a":[1,"b"]}\'); return { t.s, t.n + 0.5, t.a[2], #t.a }',
  ],
  [
    'struct packs doubles',
    "local p = struct.pack('dd', 1.5, -2); local a, b, nxt = struct.unpack('dd', p); return { #p, a * 2, b, nxt, struct.size('ddd') }",
  ],
  [
    'struct packs fixed-size strings among doubles, and unpacks them whole',
    "local z = struct.pack('dd', 0, 7); local p = struct.pack('dc16d', 1, z, 2); local a, s, b, nxt = struct.unpack('dc16d', p); local _, seven = struct.unpack('dd', s); return { #p, a, #s, seven, b, nxt, struct.size('ddddc80') }",
  ],
  [
    'numbers sent to a command as %.17g',
    "redis.call('DEL', KEYS[1]); redis.call('HSET', KEYS[1], 'f', 0.1, 'g', 1700000000000, 'h', 1 / 3); return redis.call('HMGET', KEYS[1], 'f', 'g', 'h', 'missing')",
    ['{o}:h'],
  ],
  [
    'scores: ZADD, WITHSCORES and ZSCORE formatting, ties by member',
    "redis.call('DEL', KEYS[1]); redis.call('ZADD', KEYS[1], 1 / 3, 'b', 1 / 3, 'a', 2, 'c', '-inf', 'd'); return { redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES'), redis.call('ZSCORE', KEYS[1], 'c'), redis.call('ZSCORE', KEYS[1], 'zz'), redis.call('ZREVRANGE', KEYS[1], 0, 1) }",
    ['{o}:z'],
  ],
  [
    'ZRANGEBYSCORE bounds and LIMIT',
    "redis.call('DEL', KEYS[1]); redis.call('ZADD', KEYS[1], 1, 'a', 2, 'b', 3, 'c', 4, 'd'); return { redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', 3, 'LIMIT', 1, 5), redis.call('ZRANGEBYSCORE', KEYS[1], '(1', '+inf', 'WITHSCORES', 'LIMIT', 0, 2), redis.call('ZREM', KEYS[1], 'a', 'zz'), redis.call('ZCARD', KEYS[1]) }",
    ['{o}:z2'],
  ],
  [
    'ZCOUNT with open and infinite bounds',
    "redis.call('DEL', KEYS[1]); redis.call('ZADD', KEYS[1], -3, 'a', -1, 'b', 0, 'c', 4, 'd'); return { redis.call('ZCOUNT', KEYS[1], '-inf', '(0'), redis.call('ZCOUNT', KEYS[1], '(-3', '+inf'), redis.call('ZCOUNT', KEYS[1], 0, 0), redis.call('ZCOUNT', KEYS[1] .. 'x', '-inf', '+inf') }",
    ['{o}:z3'],
  ],
  [
    'lists: RPUSH, LPOP, LPOS, LTRIM, LRANGE',
    "redis.call('DEL', KEYS[1]); redis.call('RPUSH', KEYS[1], 'a', 'b', 'c'); redis.call('LPUSH', KEYS[1], 'z'); local p = redis.call('LPOP', KEYS[1]); redis.call('LTRIM', KEYS[1], 0, 1); return { p, redis.call('LPOS', KEYS[1], 'b'), redis.call('LPOS', KEYS[1], 'c'), redis.call('LRANGE', KEYS[1], 0, -1), redis.call('LLEN', KEYS[1]) }",
    ['{o}:l'],
  ],
  [
    'hashes: HINCRBY, HSETNX, HDEL drops an empty key, HEXISTS',
    "redis.call('DEL', KEYS[1]); local n = redis.call('HINCRBY', KEYS[1], 'c', 5); local a = redis.call('HSETNX', KEYS[1], 'c', 'x'); redis.call('HDEL', KEYS[1], 'c'); return { n, a, redis.call('HEXISTS', KEYS[1], 'c'), redis.call('HLEN', KEYS[1]), redis.call('HGET', KEYS[1], 'c') }",
    ['{o}:hh'],
  ],
  [
    'missing values are false in Lua',
    "return { tostring(redis.call('GET', KEYS[1])), tostring(redis.call('HGET', KEYS[1], 'f')), tostring(redis.call('LPOP', KEYS[1])) }",
    ['{o}:none'],
  ],
  [
    'PEXPIRE on a missing key, PTTL of a missing key, SET PX then PTTL > 0',
    "redis.call('DEL', KEYS[1]); local a = redis.call('PEXPIRE', KEYS[1], 100); local b = redis.call('PTTL', KEYS[1]); redis.call('SET', KEYS[1], 'v', 'PX', 100000); return { a, b, redis.call('PTTL', KEYS[1]) > 99000 and 1 or 0, redis.call('GET', KEYS[1]) }",
    ['{o}:s'],
  ],
  [
    'redis.pcall returns an error as a table',
    "redis.call('DEL', KEYS[1]); redis.call('SET', KEYS[1], 'v'); local r = redis.pcall('LPOS', KEYS[1], 'x'); return { type(r), type(r.err) }",
    ['{o}:w'],
  ],
  ['a wrong type raises from redis.call', "redis.call('SET', KEYS[1], 'v'); return redis.call('HGET', KEYS[1], 'f')", ['{o}:w2']],
  ['writing a global fails', 'x = 1; return 1'],
  ['reading an undefined global fails', 'return undefined_thing'],
  ['Lua 5.3-only functions are absent', 'return { type(string.pack), type(math.type), type(table.move), type(utf8) }'],
];

test.each(PROBES)('%s', async (_name, lua, keys = []) => {
  const oracle = new OracleRedis({ clock: () => 1_700_000_000_000 });
  const expected = await settle(redis.eval(lua, keys.length, ...keys));
  expect(await settle(oracle.eval(lua, keys.length, ...keys))).toEqual(expected);
});
