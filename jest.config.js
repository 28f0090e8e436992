/** Tests run against real redis-server processes that test/helpers/redis-server.ts starts and stops by pid. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }] },
  testTimeout: 30000,
  // The Lua sources are compiled into src/redis/lua-sources.generated.ts: regenerate so tests run the lua/ on disk.
  globalSetup: '<rootDir>/scripts/build-lua.js',
  // Two cores: two workers keep Redis servers and the test processes from starving each other.
  maxWorkers: 2,
};
