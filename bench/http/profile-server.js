'use strict';
/**
 * ./server.js with a CPU profile on demand (bench/http/profile.js): 'profile-start' resets the CPU clock and
 * starts the V8 profiler after the warm-up; 'profile-stop' writes the profile and answers with the process
 * CPU time (user + system µs) spent between the two, so start-up and warm-up are not counted.
 */
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');

const session = new inspector.Session();
session.connect();
let since;
process.on('message', (m) => {
  if (m && m.type === 'profile-start') {
    session.post('Profiler.enable', () =>
      session.post('Profiler.setSamplingInterval', { interval: 200 }, () =>
        session.post('Profiler.start', () => {
          since = process.cpuUsage();
          process.send({ type: 'profile-started' });
        }),
      ),
    );
  } else if (m && m.type === 'profile-stop') {
    const cpu = process.cpuUsage(since);
    session.post('Profiler.stop', (error, { profile }) => {
      writeFileSync(m.file, JSON.stringify(profile));
      process.send({ type: 'profile-stopped', cpuUs: cpu.user + cpu.system });
    });
  }
});
require('./server.js');
