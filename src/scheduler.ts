// node-cron on DIGEST_CRON / DIGEST_TZ. A tick never overlaps the previous one: the cron task has
// noOverlap, and ticks requested by hand (after a confirmation) wait for the running one.
import cron, { type ScheduledTask } from 'node-cron';
import { errorMessage } from './errors.ts';
import type { Logger } from './log.ts';

export interface Scheduler {
  start(): void;
  /** Runs `job` soon, after any running tick (never two at once): e.g. a welcome digest after a confirmation. */
  runSoon(why: string, job: () => Promise<unknown>, delayMs?: number): void;
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
  // Jobs run one after another on this chain, so a cron tick and a requested job never overlap.
  let chain: Promise<void> = Promise.resolve();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const enqueue = (why: string, job: () => Promise<unknown>): Promise<void> => {
    chain = chain.then(async () => {
      if (stopped && why !== 'cron') return;
      const started = Date.now();
      try {
        await job();
        logger.info({ why, ms: Date.now() - started }, 'tick done');
      } catch (err) {
        // One line naming the cause (a full disk, a lock, the relay down), the details in err.
        logger.error({ err, why, code: (err as { code?: unknown }).code }, `tick failed: ${errorMessage(err)}`);
      }
    });
    return chain;
  };

  if (!cron.validate(opts.cron)) throw new Error(`DIGEST_CRON: not a valid cron expression: ${opts.cron}`);
  const task: ScheduledTask = cron.createTask(opts.cron, () => enqueue('cron', opts.tick), {
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
    runSoon(why, job, delayMs = 500) {
      if (stopped) return;
      const t = setTimeout(() => {
        timers.delete(t);
        void enqueue(why, job);
      }, delayMs);
      timers.add(t);
    },
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      await task.stop();
      await chain;
    },
  };
}
