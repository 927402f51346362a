// Retry delays for temporary failures (SMTP 4xx and dropped connections, feed fetches): exponential
// backoff with jitter, capped. One formula for every retry in the service.

export interface BackoffPolicy {
  /** Delay scale of the first retry (SMTP_RETRY_BASE_MS for mail). */
  baseMs: number;
  /** No delay exceeds this (SMTP_RETRY_MAX_MS for mail). */
  maxMs: number;
}

/**
 * Delay before retry number `attempt` (1 = first retry): "equal jitter", i.e. half of the exponential
 * step is fixed and half random, so retries spread out (no thundering herd after a relay hiccup)
 * while never coming back sooner than half the step.
 */
export function retryDelayMs(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(attempt));
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(n - 1, 40));
  return Math.round(step / 2 + random() * (step / 2));
}
