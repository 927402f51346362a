#!/usr/bin/env node
// The `digest` command straight from the TypeScript sources, through tsx (a dev dependency): what the
// tests spawn, and `npm run digest:dev -- …` while developing (no build step, always the current sources).
// Production runs bin/digest.js (compiled dist/). Send worker threads follow: started from src/ they
// load send-worker.mjs (tsx), from dist/ the compiled send-worker.js.
import { existsSync } from 'node:fs';
import { register } from 'tsx/esm/api';

if (existsSync('.env')) process.loadEnvFile('.env');

register();
const { runCli } = await import('../src/cli.ts');
process.exitCode = await runCli(process.argv);
