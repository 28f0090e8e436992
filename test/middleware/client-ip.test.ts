import { ConfigError } from '../../src/errors';
import { clientGroup, resolveIpv6Subnet } from '../../src/middleware/client-ip';
import { bulkLimiter as expressLimiter } from '../../src/middleware/express';
import { bulkLimiter as koaLimiter } from '../../src/middleware/koa';

describe('clientGroup: the default group of a client address', () => {
  test.each([
    ['2001:db8:1:1ff:abcd:ef01:2345:6789', 56, '2001:db8:1:100::/56'],
    ['2001:db8:1:1ff::1', 64, '2001:db8:1:1ff::/64'],
    ['2001:DB8::1', 56, '2001:db8::/56'],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 128, '2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff/128'],
    ['2001:db8:aaaa:bbbb::1', 33, '2001:db8:8000::/33'],
    ['fe80::1%eth0', 56, 'fe80::/56'],
    ['::1', 56, '::/56'],
    ['64:ff9b::192.0.2.33', 96, '64:ff9b::/96'],
    ['2001:0:0:1:0:0:0:1', 128, '2001:0:0:1::1/128'],
  ])('%s by /%i → %s', (ip, bits, group) => expect(clientGroup(ip, bits)).toBe(group));

  test.each([
    ['192.0.2.1', 56],
    ['::ffff:192.0.2.1', 56],
    ['2001:db8::1', false],
    ['not an ip', 56],
    [undefined, 56],
  ] as const)('%s (ipv6Subnet %s) stays as it is', (ip, bits) => expect(clientGroup(ip, bits)).toBe(ip));

  test('ipv6Subnet: 56 by default, 1–128 or false', () => {
    expect(resolveIpv6Subnet(undefined)).toBe(56);
    expect(resolveIpv6Subnet(false)).toBe(false);
    expect(resolveIpv6Subnet(64)).toBe(64);
    for (const bad of [0, 129, 56.5, '56', true])
      expect(() => resolveIpv6Subnet(bad)).toThrow(expect.objectContaining({ code: 'ERR_BL_IPV6_SUBNET' }));
  });

  test.each([
    ['express', expressLimiter as (o: unknown) => unknown],
    ['koa', koaLimiter as (o: unknown) => unknown],
  ])('%s: ipv6Subnet with a group function is a ConfigError (it shapes the default group only)', (_name, bulkLimiter) => {
    expect(() => bulkLimiter({ limit: 5, group: () => 'a', ipv6Subnet: 64 })).toThrow(ConfigError);
    expect(() => bulkLimiter({ limit: 5, ipv6Subnet: 0 })).toThrow(expect.objectContaining({ code: 'ERR_BL_IPV6_SUBNET' }));
  });
});
