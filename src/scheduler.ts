// node-cron on DIGEST_CRON / DIGEST_TZ. A tick never overlaps the previous one: the cron task has
// noOverlap, and ticks requested by hand (after a confirmation) wait for the running one.
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from './log.ts';

export interface Scheduler {
  start(): void;
  /** Runs a tick soon (debounced), e.g. right after someone confirms so the first digest comes at once. */
  poke(delayMs?: number): void;
  /** Stops scheduling and waits for a running tick. */
  stop(): Promise<void>;
}

export function createScheduler(opts: {
  cron: string;
  timezone: string;
  logger: Logger;
  tick: () => Promise<unknown>;
}): Scheduler {
  const { logger } = opts;
  let running: Promise<void> | undefined;
  let pokeTimer: NodeJS.Timeout | undefined;
  let stopped = false;

  const runOnce = async (why: string): Promise<void> => {
    if (running) return running.then(() => undefined);
    running = (async () => {
      const started = Date.now();
      try {
        await opts.tick();
        logger.info({ why, ms: Date.now() - started }, 'tick done');
      } catch (err) {
        logger.error({ err, why }, 'tick failed');
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  if (!cron.validate(opts.cron)) throw new Error(`DIGEST_CRON: not a valid cron expression: ${opts.cron}`);
  const task: ScheduledTask = cron.createTask(opts.cron, () => runOnce('cron'), {
    timezone: opts.timezone,
    noOverlap: true,
    name: 'digest-tick',
    // node-cron's own logger prints coloured warnings to the console: route it through pino.
    logger: {
      info: (m) => logger.debug({ cron: m }, 'cron'),
      warn: (m) => logger.warn({ cron: m }, 'cron'),
      error: (m, err) => logger.error({ cron: String(m), err }, 'cron'),
      debug: (m) => logger.debug({ cron: String(m) }, 'cron'),
    },
  });

  return {
    start() {
      task.start();
      logger.info({ cron: opts.cron, timezone: opts.timezone }, 'scheduler started');
    },
    poke(delayMs = 1500) {
      if (stopped) return;
      clearTimeout(pokeTimer);
      pokeTimer = setTimeout(() => void runOnce('poke'), delayMs);
    },
    async stop() {
      stopped = true;
      clearTimeout(pokeTimer);
      await task.stop();
      await running;
    },
  };
}
