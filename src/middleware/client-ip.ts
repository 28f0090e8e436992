/**
 * The default group: the client IP, with IPv6 addresses grouped by subnet. One subscriber usually gets a
 * whole IPv6 prefix (a /56 or /64) and can rotate through it, so per-address groups would make each request
 * a new tenant; express-rate-limit groups by /56 by default, and so do we. IPv4 addresses and IPv4-mapped
 * IPv6 addresses (`::ffff:192.0.2.1`) are left as they are.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { integer } from '../util/validate';

export const DEFAULT_IPV6_SUBNET = 56;

/** `ipv6Subnet`: a prefix length 1–128, or `false` for one group per address. */
export function resolveIpv6Subnet(value: unknown): number | false {
  if (value === undefined) return DEFAULT_IPV6_SUBNET;
  if (value === false) return false;
  return integer('ipv6Subnet', value, { max: 128, expected: 'a prefix length from 1 to 128, or false' });
}

/** The group of a client address: an IPv6 address becomes its `/bits` prefix (`2001:db8:0:100::/56`). */
export function clientGroup(ip: string | undefined, bits: number | false): string | undefined {
  if (ip === undefined || bits === false || !ip.includes(':')) return ip;
  const words = ipv6Words(ip);
  if (words === undefined) return ip;
  if (words[0] === 0 && words[1] === 0 && words[2] === 0 && words[3] === 0 && words[4] === 0 && words[5] === 0xffff) {
    return ip; // IPv4-mapped: one IPv4 client
  }
  const masked = words.map((word, i) => {
    const keep = Math.max(0, Math.min(16, bits - i * 16));
    return keep === 0 ? 0 : word & (0xffff << (16 - keep)) & 0xffff;
  });
  return `${compress(masked)}/${bits}`;
}

/** The eight 16-bit words of an IPv6 address (zone id dropped, embedded IPv4 allowed); undefined if not IPv6. */
function ipv6Words(address: string): number[] | undefined {
  const ip = address.split('%')[0] ?? '';
  if (!isIPv6(ip)) return undefined;
  let text = ip;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (isIPv4(tail)) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros = rest === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(zeros).fill('0'), ...right].map((h) => parseInt(h, 16));
}

/** RFC 5952 text: lower case, the longest run of two or more zero words as `::`. */
function compress(words: number[]): string {
  let bestAt = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength) {
      bestAt = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (bestAt < 0) return hex.join(':');
  return `${hex.slice(0, bestAt).join(':')}::${hex.slice(bestAt + bestLength).join(':')}`;
}
