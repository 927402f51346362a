// Every `digest` subcommand, in the order `digest --help` lists them. Each entry registers one command
// (its arguments, options, description and action) on the program; the work itself is loaded when it runs.
import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { registerCopy } from './copy.ts';
import { registerPlan } from './edition.ts';
import { registerRecover, registerWorker } from './worker.ts';
import { registerIngest, registerRun, registerServe, registerSources, registerStatus } from './delivery.ts';
import { registerAdminPassword, registerBackup, registerConfig, registerDoctor, registerMigrate, registerRestore } from './maintenance.ts';
import {
  registerImport,
  registerOptOuts,
  registerPreview,
  registerSubscribe,
  registerSubscribers,
  registerUnsubscribe,
  registerUnsuppress,
} from './subscribers.ts';

export type CommandRegistrar = (program: Command, ctx: CliContext) => void;

export const CLI_COMMANDS: readonly CommandRegistrar[] = [
  registerServe,
  registerIngest,
  registerRun,
  registerSubscribe,
  registerUnsubscribe,
  registerUnsuppress,
  registerOptOuts,
  registerSubscribers,
  registerPreview,
  registerImport,
  registerStatus,
  registerSources,
  registerAdminPassword,
  registerBackup,
  registerDoctor,
  registerConfig,
  registerRestore,
  registerMigrate,
  registerCopy,
  registerPlan,
  registerWorker,
  registerRecover,
];
