// What the send loop does after a failed send: the SMTP retry policy in one place. The transport says
// what happened (src/mail/errors.ts turns the relay's answer into a kind: temporary for 4xx, permanent
// for 5xx, connection for refused or dropped connections, ambiguous for a lost answer after the final
// "."); this module decides what that means for the digest, and the send loop and the ledger only carry
// the decision out. How long a retry waits is the service's one backoff curve (src/backoff.ts).
import { retryDelayMs } from '../backoff.ts';
import type { MailErrorKind } from '../mail/errors.ts';

export interface RetrySettings {
  /** Tries in all, the first send included (SMTP_MAX_ATTEMPTS). */
  SMTP_MAX_ATTEMPTS: number;
  /** Scale of the first retry's delay (SMTP_RETRY_BASE_MS). */
  SMTP_RETRY_BASE_MS: number;
  /** No retry waits longer (SMTP_RETRY_MAX_MS). */
  SMTP_RETRY_MAX_MS: number;
}

export type AfterFailure =
  /** The relay may have queued it: never resent, papers carried to the next digest (see ledger/port.ts). */
  | { action: 'unknown' }
  /** The relay refused it for good: failed, counted toward suppressing the address. */
  | { action: 'fail' }
  /** Try again at `at`. */
  | { action: 'retry'; at: Date }
  /** Temporary, but its tries are used up: failed, not counted as a hard failure of the address. */
  | { action: 'give-up' };

/**
 * The decision after a failed send of a row that had `attemptsBefore` tries before this one.
 * `random` spreads retries (backoff.ts's jitter); tests pass a fixed one.
 */
export function afterFailure(
  kind: MailErrorKind,
  attemptsBefore: number,
  settings: RetrySettings,
  now: Date,
  random: () => number,
): AfterFailure {
  if (kind === 'ambiguous') return { action: 'unknown' };
  if (kind === 'permanent') return { action: 'fail' };
  const attempt = attemptsBefore + 1;
  if (attempt >= settings.SMTP_MAX_ATTEMPTS) return { action: 'give-up' };
  const delay = retryDelayMs(attempt, { baseMs: settings.SMTP_RETRY_BASE_MS, maxMs: settings.SMTP_RETRY_MAX_MS }, random);
  return { action: 'retry', at: new Date(now.getTime() + delay) };
}
