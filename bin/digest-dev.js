#!/usr/bin/env node
// The `digest` command straight from the TypeScript sources, through tsx (a dev dependency): what the
// tests spawn, and `npm run digest:dev -- …` while developing (no build step, always the current sources).
// Production runs bin/digest.js (compiled dist/). Send worker threads follow: started from src/ they
// load send-worker.mjs (tsx), from dist/ the compiled send-worker.js.
import { existsSync } from 'node:fs';
import { register } from 'tsx/esm/api';


register();
const { runCli } = await import('../src/cli.ts');
// A .env file in the working directory fills in variables the environment does not set (runCli reads it,
// so that `digest config` can say where each value came from).
process.exitCode = await runCli(process.argv, undefined, undefined, existsSync('.env') ? '.env' : undefined);
