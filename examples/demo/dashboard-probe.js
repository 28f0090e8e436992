'use strict';
/** The example app's dashboard URL, printed while the demo runs, but only if the app serves one. */
const http = require('node:http');

/** Resolves `http://localhost:<port>/dashboard` when GET answers 200 there (one try), otherwise null. */
function probeDashboard(port, { timeoutMs = 1000 } = {}) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/dashboard', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? `http://localhost:${port}/dashboard` : null);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

module.exports = { probeDashboard };
