#!/usr/bin/env node
// The `digest` command: runs the TypeScript sources through tsx (Node 20 has no type stripping).
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli.ts');
process.exitCode = await runCli(process.argv);
