// What a failure means (src/bounces/classify.ts), on diagnostics as real receivers word them (most from
// sisimai's set-of-emails corpus: lhost-postfix-28/54/58/71/73/80, lhost-barracuda-01).
import { describe, expect, it } from 'vitest';
import { classifyFailure } from '../../src/bounces/classify.ts';

describe('classifyFailure', () => {
  it('refusals of our mail are policy blocks, whatever their code', () => {
    const policy: Array<[string | null, string]> = [
      ['5.7.1', 'smtp; 550-5.7.1 [192.0.2.10 12] Gmail has detected that this message is likely unsolicited mail.'],
      ['5.7.1', 'smtp; 550-5.7.1 [192.0.2.22 18] Our system has detected that this message is likely suspicious due to the very low reputation of the sending IP address.'],
      ['5.1.0', 'smtp; 550-5.1.0 MXIN506 MailFrom domain is listed in Spamhaus.'],
      ['5.7.1', "smtp; 554 5.7.1 Your message was rejected due to libsisimai.org's DMARC policy."],
      ['5.7.1', 'smtp; 550 5.7.1 Message content rejected, UBE, id=00000-22-225'],
      ['5.7.606', 'smtp; 550 5.7.606 Access denied, banned sending IP [192.0.2.10]. (S3150)'],
      ['5.7.26', 'smtp; 550 5.7.26 This mail has been blocked because the sender is unauthenticated.'],
      ['5.0.0', 'smtp; 554 5.0.0 Service unavailable; Client host [192.0.2.10] blocked using zen.spamhaus.org'],
      ['4.7.0', 'smtp; 421 4.7.0 [TSS04] Messages from 192.0.2.10 temporarily deferred due to unexpected volume or user complaints'],
      ['5.7.1', 'smtp; 550 5.7.1 Access denied'],
    ];
    for (const [status, text] of policy) expect([status, text, classifyFailure(status, text, status!.startsWith('5'))]).toEqual([status, text, 'policy']);
  });

  it('a mailbox that does not exist is hard, even under a 5.7.x; a full mailbox is soft, even under a 5.x.x', () => {
    expect(classifyFailure('5.1.1', 'smtp; 550 5.1.1 <a@example.com>: Recipient address rejected: User unknown in virtual mailbox table', true)).toBe('hard');
    expect(classifyFailure('5.7.1', 'smtp; 550 5.7.1 <a@example.com>: Relay access denied', true)).toBe('hard');
    expect(classifyFailure('5.2.2', 'smtp; 552-5.2.2 The email account that you tried to reach is over quota.', true)).toBe('soft');
    expect(classifyFailure('4.2.2', 'smtp; 452 4.2.2 The email account that you tried to reach is over quota.', false)).toBe('soft');
    expect(classifyFailure('5.0.0', 'Permanent/MailboxFull smtp; 552 mailbox full', true)).toBe('soft');
    expect(classifyFailure('4.4.7', 'smtp; 421 4.4.7 connection timed out', false)).toBe('soft');
    expect(classifyFailure(null, 'mailbox unavailable', true)).toBe('hard');
  });
});
