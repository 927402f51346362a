#!/usr/bin/env node
// The `digest` command in production: the compiled JavaScript in dist/ (`npm run build`, run by `npm
// install` through the `prepare` script). No TypeScript compiler or source-map cache is loaded: start-up
// and idle memory are those of the service alone (see README "Production build" for the figures).
// From the TypeScript sources instead (development, tests): bin/digest-dev.js.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('digest: dist/ is missing; build it with `npm run build` (npm install does it too)\n');
  process.exit(1);
}

const { runCli } = await import(entry.href);
// A .env file in the working directory fills in variables the environment does not set (runCli reads it,
// so that `digest config` can say where each value came from).
process.exitCode = await runCli(process.argv, undefined, undefined, existsSync('.env') ? '.env' : undefined);
