'use strict';
/**
 * One HTTP server variant in its own process (the load generator runs in another). Forked by
 * sections/http.js with a JSON config; reports `{ port }` or `{ error }` over IPC, answers 'cpu' with
 * `{ cpuUs }` (its CPU time so far), exits on 'stop'.
 */
const http = require('node:http');
const Redis = require('ioredis');
const { VARIANTS } = require('./apps');

const { variant, redisPort, limits } = JSON.parse(process.argv[2]);

function main() {
  const client = new Redis({ host: '127.0.0.1', port: redisPort, maxRetriesPerRequest: 1 });
  const handler = VARIANTS[variant](client, limits);
  const server = http.createServer(handler);
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (m) => {
    // the process's CPU time so far (user + system, µs): sections/http.js reads it around the measured span
    if (m === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ cpuUs: user + system });
    }
    if (m === 'stop')
      server.close(() => {
        client.disconnect();
        process.exit(0);
      });
  });
}

try {
  main();
} catch (error) {
  process.send({ error: String(error && error.message).split('\n')[0] }, () => process.exit(0));
}
