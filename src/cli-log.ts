// Where a CLI command's log lines go. On a terminal a command prints its own few lines (summary, errors)
// and its log lines go to a file, LOG_FILE or digest.log beside the database, unless --verbose; in a pipe,
// under a process manager or with LOG_FILE set they go where they always did (stderr, or LOG_FILE).
import { dirname, join } from 'node:path';
import type { CliIo } from './cli-io.ts';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import { plural } from './words.ts';

/** digest.log beside the database (db/ for an in-memory one). */
export function defaultLogFile(config: Pick<Config, 'DATABASE_PATH'>): string {
  return join(config.DATABASE_PATH === ':memory:' ? 'db' : dirname(config.DATABASE_PATH), 'digest.log');
}

export class CommandLogs {
  private warnings = 0;
  /** Set when this command's log lines went to the file because stderr is a terminal. */
  private file: string | undefined;

  constructor(
    private readonly io: CliIo,
    private readonly stderrIsTTY: boolean,
  ) {}

  /** The configuration with LOG_FILE as this command uses it. */
  configure(config: Config, verbose: boolean): Config {
    if (verbose) return { ...config, LOG_FILE: undefined };
    if (config.LOG_FILE || !this.stderrIsTTY) return config;
    this.file = defaultLogFile(config);
    return { ...config, LOG_FILE: this.file };
  }

  async logger(config: Config): Promise<Logger> {
    const { createLogger } = await import('./log.ts');
    return createLogger(config.LOG_LEVEL, { file: config.LOG_FILE, onWarning: () => this.warnings++ });
  }

  /** One line when warnings went to the file, so that nothing an operator must see is hidden there. */
  finish(): void {
    if (this.file && this.warnings > 0) {
      this.io.err(`${plural(this.warnings, 'warning', 'warnings')} logged to ${this.file} (--verbose shows the log here)`);
    }
    this.warnings = 0;
    this.file = undefined;
  }
}
