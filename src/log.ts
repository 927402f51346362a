// Structured logging with pino. Quiet in tests (LOG_LEVEL=silent from vitest.config.ts).
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  // Logs go to stderr so that CLI output on stdout stays clean for scripts.
  return pino({ level, base: undefined }, pino.destination(2));
}

export const silentLogger: Logger = pino({ level: 'silent' });
