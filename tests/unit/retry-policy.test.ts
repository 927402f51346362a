// The SMTP retry policy as an operator reads it in the README: what each kind of failure does to a
// digest, when a deferred one is tried again, and when it is given up.
import { describe, expect, it } from 'vitest';
import { afterFailure } from '../../src/send/retry-policy.ts';

const settings = { SMTP_MAX_ATTEMPTS: 4, SMTP_RETRY_BASE_MS: 30_000, SMTP_RETRY_MAX_MS: 3_600_000 };
const now = new Date('2026-11-25T07:00:00Z');
const at = (ms: number) => new Date(now.getTime() + ms);

describe('after a failed send', () => {
  it('a lost answer after the whole message is never resent; a 5xx fails the digest', () => {
    expect(afterFailure('ambiguous', 0, settings, now, () => 0)).toEqual({ action: 'unknown' });
    expect(afterFailure('permanent', 0, settings, now, () => 0)).toEqual({ action: 'fail' });
  });

  it('a 4xx or a dropped connection is retried later, on the backoff curve', () => {
    expect(afterFailure('temporary', 0, settings, now, () => 0)).toEqual({ action: 'retry', at: at(15_000) });
    expect(afterFailure('temporary', 0, settings, now, () => 1)).toEqual({ action: 'retry', at: at(30_000) });
    expect(afterFailure('connection', 2, settings, now, () => 1)).toEqual({ action: 'retry', at: at(120_000) });
  });

  it('gives up once SMTP_MAX_ATTEMPTS tries are used, whatever the temporary kind', () => {
    expect(afterFailure('temporary', 3, settings, now, () => 0)).toEqual({ action: 'give-up' });
    expect(afterFailure('connection', 3, settings, now, () => 0)).toEqual({ action: 'give-up' });
    expect(afterFailure('temporary', 2, settings, now, () => 0).action).toBe('retry');
  });
});
