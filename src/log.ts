// Structured logging with pino. Quiet in tests (LOG_LEVEL=silent from vitest.config.ts).
// JSON lines on stderr, or readable coloured lines when stderr is a terminal (pino-pretty).
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  // Logs go to stderr so that CLI output on stdout stays clean for scripts.
  const destination = process.stderr.isTTY
    ? pretty({ destination: 2, sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' })
    : pino.destination(2);
  return pino({ level, base: undefined }, destination);
}

export const silentLogger: Logger = pino({ level: 'silent' });
