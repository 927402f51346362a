#!/usr/bin/env node
// The `digest` command: runs the TypeScript sources through tsx (Node 20 has no type stripping).
import { existsSync } from 'node:fs';
import { register } from 'tsx/esm/api';

// A .env file in the working directory fills in variables the environment does not set.
if (existsSync('.env')) process.loadEnvFile('.env');

register();
const { runCli } = await import('../src/cli.ts');
process.exitCode = await runCli(process.argv);
