'use strict';
/** Sends the planned load to every system at the same moments, open-loop, and records the answers. */
const http = require('node:http');

const ROUTES = {
  reports: (n) => ({ method: 'GET', path: `/api/reports/${n}` }),
  export: () => ({ method: 'GET', path: '/api/export' }),
  imports: () => ({ method: 'POST', path: '/api/imports', body: '{"rows":10}' }),
};

function send({ agent, port, tenant, request }, onAnswer) {
  const headers = { 'x-tenant': tenant };
  if (request.body) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(request.body);
  }
  const req = http.request({ agent, host: '127.0.0.1', port, method: request.method, path: request.path, headers }, (res) => {
    res.resume();
    res.on('end', () => onAnswer(res.statusCode ?? 0));
  });
  req.on('error', () => onAnswer(0));
  req.end(request.body);
}

/**
 * Plays `plan` against `systems` ({ port, recorder }), starting at `startMs`.
 * Resolves when every request is sent and answered.
 */
function drive({ plan, systems, startMs, tickMs = 5 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  let nextIndex = 0;
  let inFlight = 0;
  return new Promise((resolve) => {
    const finishIfDone = () => {
      if (nextIndex >= plan.length && inFlight === 0) {
        agent.destroy();
        resolve();
      }
    };
    const tick = () => {
      const elapsed = Date.now() - startMs;
      while (nextIndex < plan.length && plan[nextIndex].t <= elapsed) {
        const { t, tenant } = plan[nextIndex];
        const request = ROUTES[tenant.route](nextIndex);
        nextIndex++;
        for (const system of systems) {
          inFlight++;
          system.recorder.count('sent', tenant.name, startMs + t);
          send({ agent, port: system.port, tenant: tenant.name, request }, (status) => {
            inFlight--;
            system.recorder.answer(tenant.name, status, startMs + t);
            finishIfDone();
          });
        }
      }
      if (nextIndex < plan.length) setTimeout(tick, tickMs);
      else finishIfDone();
    };
    tick();
  });
}

module.exports = { drive };
