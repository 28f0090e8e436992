/** Tests run against real redis-server processes that test/helpers/redis-server.ts starts and stops by pid. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }] },
  testTimeout: 30000,
  // Two cores: two workers keep Redis servers and the test processes from starving each other.
  maxWorkers: 2,
};
