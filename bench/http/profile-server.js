'use strict';
/**
 * ./server.js with a CPU profile on demand (bench/http/profile.js): 'profile-start' resets the CPU clock and the
 * request count and (unless `instructions`) starts the V8 profiler, after the warm-up; 'profile-stop' writes the
 * profile and answers with the process CPU time (user + system µs) and the requests served between the two, so
 * start-up and warm-up are not counted.
 */
const http = require('node:http');
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');

let requests = 0;
const createServer = http.createServer;
http.createServer = (handler) =>
  createServer((req, res) => {
    requests++;
    handler(req, res);
  });

const session = new inspector.Session();
session.connect();
let since;
let profiling = false;
const started = () => {
  since = process.cpuUsage();
  requests = 0;
  process.send({ type: 'profile-started' });
};
process.on('message', (m) => {
  if (m && m.type === 'profile-start') {
    profiling = !m.instructions;
    if (!profiling) return started();
    session.post('Profiler.enable', () =>
      session.post('Profiler.setSamplingInterval', { interval: 200 }, () => session.post('Profiler.start', started)),
    );
  } else if (m && m.type === 'profile-stop') {
    const cpu = process.cpuUsage(since);
    const served = requests;
    const answer = () => process.send({ type: 'profile-stopped', cpuUs: cpu.user + cpu.system, requests: served });
    if (!profiling) return answer();
    session.post('Profiler.stop', (error, { profile }) => {
      writeFileSync(m.file, JSON.stringify(profile));
      answer();
    });
  }
});
require('./server.js');
