// Sending a stored confirmation email, the same on both engines: the CLI and the console wait for it (a
// failure is an error that says it will be retried); the web does not (it is stored, so the page may say
// "on its way"; failures are retried and counted).
import { AppError, errorMessage } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Queued } from '../notices/queue.ts';
import type { NoticeSender } from '../notices/sender.ts';
import type { SubscribeResult } from './types.ts';

type EmailState = SubscribeResult['emailState'];

export interface DeliverNotice {
  notices: NoticeSender;
  logger: Logger;
  /** The relay's answer to this subscriber's last notice, for the error (each engine reads its own table). */
  lastResponse: (subscriberId: number) => Promise<string | undefined> | string | undefined;
}

export async function deliverNotice(deps: DeliverNotice, queued: Queued, wait: boolean, subscriberId: number): Promise<EmailState> {
  const { notices, logger } = deps;
  if (queued === 'throttled') {
    logger.info({ subscriberId }, 'confirmation email throttled (per-address limits)');
    return 'throttled';
  }
  if (!wait) {
    // A notice that was waiting for a retry goes now: the person asked again.
    if (queued.reused) void notices.sendNow(queued.id).catch((e: unknown) => logger.error({ err: errorMessage(e) }, 'confirmation email failed'));
    else notices.kick();
    return 'queued';
  }
  const result = await notices.sendNow(queued.id);
  if (result === 'sent') return 'sent';
  if (result === undefined) return 'queued'; // another process is sending it right now
  const why = (await deps.lastResponse(subscriberId)) ?? result;
  const later = result === 'retry' ? '; it is kept and retried by the next run' : '';
  throw new AppError('CONFIRM_EMAIL_FAILED', `Could not send the confirmation email: ${why}${later}`, { temporary: result === 'retry' });
}
