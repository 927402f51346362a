// The request log keeps no working link: every route whose path carries a signed token logs it redacted.
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/web/request-log.ts';

const TOKEN = '8.v8.ZGtQwP2v2PpBOh88oz-tIw';

describe('redactUrl', () => {
  it('replaces the token of every signed link path, and keeps the rest of the path', () => {
    const cases: Array<[string, string]> = [
      [`/confirm/${TOKEN}`, '/confirm/[token]'],
      [`/preferences/${TOKEN}?saved=1`, '/preferences/[token]?saved=1'],
      [`/unsubscribe/${TOKEN}`, '/unsubscribe/[token]'],
      [`/mute/${TOKEN}`, '/mute/[token]'],
      [`/mute/${TOKEN}/42`, '/mute/[token]/42'],
      [`/digests/${TOKEN}`, '/digests/[token]'],
      [`/feedback/${TOKEN}/695/more`, '/feedback/[token]/695/more'],
      [`/follow/${TOKEN}/0/695`, '/follow/[token]/0/695'],
      [`/feed/${TOKEN}`, '/feed/[token]'],
    ];
    for (const [url, logged] of cases) {
      expect(redactUrl(url)).toBe(logged);
      expect(redactUrl(url)).not.toContain(TOKEN);
    }
  });

  it('leaves paths without tokens as they are', () => {
    for (const url of ['/', '/subscribe', '/health', '/api/topics/preview?q=rl', '/admin/subscribers/12', '/feedbacks']) expect(redactUrl(url)).toBe(url);
  });
});
