// Structured logging with pino. Quiet in tests (LOG_LEVEL=silent from vitest.config.ts).
// JSON lines on stderr, or readable coloured lines when stderr is a terminal (pino-pretty), or JSON lines
// appended to a file (LOG_FILE; the CLI on a terminal writes there unless --verbose, see cli-log.ts).
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export interface LoggerOptions {
  /** Append JSON lines to this file instead of writing to stderr (its folder is created). */
  file?: string | undefined;
  /** Called for every line at warn level or above (the CLI counts them for its last line). */
  onWarning?: () => void;
}

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', opts: LoggerOptions = {}): Logger {
  // Logs go to stderr so that CLI output on stdout stays clean for scripts.
  const destination = opts.file
    ? pino.destination({ dest: opts.file, append: true, mkdir: true, sync: true })
    : process.stderr.isTTY
      ? pretty({ destination: 2, sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' })
      : pino.destination(2);
  return pino({ level, base: undefined, hooks: { logMethod: logMethodHook(opts.onWarning) } }, destination);
}

/**
 * pino writes a `msg` field of the merge object AND the message, two `msg` keys in one JSON line (which a
 * JSON parser reads as the last one): the field is kept as `detail`.
 */
function logMethodHook(onWarning: (() => void) | undefined) {
  return function logMethod(this: Logger, args: Parameters<Logger['info']>, method: (...a: unknown[]) => void, level: number): void {
    if (onWarning && level >= 40) onWarning();
    const first = args[0] as unknown;
    if (first && typeof first === 'object' && !(first instanceof Error) && 'msg' in first) {
      const { msg, ...rest } = first as Record<string, unknown>;
      method.apply(this, [{ ...rest, detail: msg }, ...args.slice(1)]);
      return;
    }
    method.apply(this, args as unknown[]);
  };
}

export const silentLogger: Logger = pino({ level: 'silent' });
