// The retry schedule of a digest deferred by the relay (SMTP 4xx, dropped connection), with the default
// settings (SMTP_RETRY_BASE_MS=30000, SMTP_RETRY_MAX_MS=3600000): what an operator sees in `next_attempt_at`.
import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/backoff.ts';
import { loadConfig } from '../../src/config.ts';

const config = loadConfig({});
const policy = { baseMs: config.SMTP_RETRY_BASE_MS, maxMs: config.SMTP_RETRY_MAX_MS };
const SECOND = 1000;
const MINUTE = 60 * SECOND;

describe('SMTP retry delays', () => {
  it('double from 30 s up to an hour, each between half and all of its step', () => {
    const steps = [30 * SECOND, 1 * MINUTE, 2 * MINUTE, 4 * MINUTE, 8 * MINUTE, 16 * MINUTE, 32 * MINUTE, 60 * MINUTE, 60 * MINUTE];
    steps.forEach((step, i) => {
      expect(retryDelayMs(i + 1, policy, () => 0)).toBe(step / 2);
      expect(retryDelayMs(i + 1, policy, () => 1)).toBe(step);
    });
  });

  it('spread retries of many messages deferred together (no thundering herd)', () => {
    const delays = Array.from({ length: 200 }, () => retryDelayMs(3, policy));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(1 * MINUTE);
    expect(Math.max(...delays)).toBeLessThanOrEqual(2 * MINUTE);
    expect(new Set(delays).size).toBeGreaterThan(100);
  });
});
