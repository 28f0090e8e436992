'use strict';
/** Command-line options of `npm run demo` (see --help). */

const HELP = `usage: npm run demo -- [options]

  --duration <s>   seconds of load (default 20; --short: 4)
  --limit <n>      requests per second the backend can take (default 100)
  --tenants <n>    light tenants besides the flooder, the paying tenant, the importer and the trials (default 2)
  --short          a quick run (tests, CI)
  --out <file>     where to write the HTML report (default: a temp dir; the path is printed)
  --json <file>    also write the summary as JSON
  --seed <n>       random seed of the load (default 42)
  --plain          plain lines even on a terminal

Runs on the embedded MemoryStore, or on Redis when REDIS_URL is set.`;

function positive(name, text, integer) {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`Expected --${name} to be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(text)}`);
  }
  return value;
}

function parseOptions(argv) {
  const options = { durationS: 20, limit: 100, lightTenants: 2, short: false, out: undefined, json: undefined, seed: 42, plain: false, help: false };
  let durationGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    switch (arg) {
      case '--duration':
        options.durationS = positive('duration', value(), false);
        durationGiven = true;
        break;
      case '--limit':
        options.limit = positive('limit', value(), true);
        break;
      case '--tenants':
        options.lightTenants = Number(value());
        break;
      case '--short':
        options.short = true;
        break;
      case '--out':
        options.out = value();
        break;
      case '--json':
        options.json = value();
        break;
      case '--seed':
        options.seed = positive('seed', value(), true);
        break;
      case '--plain':
        options.plain = true;
        break;
      case '--help':
      case '-h':
        options.help = true;
        break;
      default:
        throw new Error(`unknown option ${arg}\n\n${HELP}`);
    }
  }
  if (!Number.isInteger(options.lightTenants) || options.lightTenants < 0 || options.lightTenants > 20) {
    throw new Error(`Expected --tenants to be an integer from 0 to 20, got ${options.lightTenants}`);
  }
  if (options.short && !durationGiven) options.durationS = 4;
  if (options.durationS > 120) throw new Error('Expected --duration to be at most 120 seconds');
  return options;
}

module.exports = { parseOptions, HELP };
