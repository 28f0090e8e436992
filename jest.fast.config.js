/**
 * `npm run test:fast`: the edit loop. The whole suite less what takes minutes: the Lua differential oracle's
 * long runs, the package and docs checks (they pack and type-check consumers), the demo and browser tests,
 * the fault and failover tests that start and kill servers, the long drains, and the Redis conformance run
 * (the memory one stays: both stores pass the same suite). `npm test` runs everything.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  testPathIgnorePatterns: [
    '/node_modules/',
    '/test/oracle/differential',
    '/test/package/',
    '/test/demo/',
    '/test/faults/',
    '/test/dashboard/page',
    'failover',
    '/test/queue/drain-',
    '/test/conformance/redis',
  ],
};
