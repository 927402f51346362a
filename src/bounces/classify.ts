// What a delivery failure means, read from its enhanced status code and the receiving server's text:
//   policy  the receiver refused our mail, not the mailbox: spam or "likely unsolicited", a blocklist
//           (Spamhaus, an RBL), our reputation, SPF / DKIM / DMARC. Any 5.7.x / 4.7.x unless its text
//           names the mailbox, and any code whose text says so (Spamhaus listings come as 5.1.0 too).
//           It is ours to fix; the reader did nothing, so it never counts against their address.
//   soft    the mailbox exists but cannot take mail now: a 4.x.x the remote gave up on, or a full
//           mailbox whatever its class (Gmail answers over quota with 552 5.2.2).
//   hard    any other permanent failure: the address does not work.

export type FailureKind = 'hard' | 'soft' | 'policy';

/** Text that puts the blame on the sender. */
const SENDER_REFUSED =
  /unsolicited|\bspam|\bUBE\b|block ?list|black ?list|blocklisted|blacklisted|\blisted (?:at|in|on|by)\b|spamhaus|spamcop|barracuda|\b(?:RBL|DNSBL)\b|reputation|\bDMARC\b|\bSPF\b|\bDKIM\b|unauthenticated|policy reasons|local policy|denied by policy|content ?rejected/i;

/** Text that names the mailbox itself (some servers answer "user unknown" with a 5.7.1). */
const MAILBOX_REFUSED =
  /user unknown|unknown user|no such (?:user|mailbox)|does not exist|mailbox (?:unavailable|not found|disabled)|recipient address rejected|relay access denied|account (?:is )?disabled/i;

/** A full mailbox, whatever the class of its code. */
const MAILBOX_FULL = /over ?quota|quota exceeded|mailbox (?:is )?full|mailboxfull|insufficient (?:system )?storage/i;

/** The enhanced status code in an SMTP answer ("550-5.7.1 [192.0.2.10] …" -> "5.7.1"), or null. */
export function enhancedStatus(answer: string): string | null {
  return /(?:^|[\s-])([245]\.\d{1,3}\.\d{1,3})(?=\s|$)/.exec(answer)?.[1] ?? null;
}

/**
 * The kind of one failure: `status` an enhanced code ('5.7.1') or null, `text` the server's diagnostic,
 * `permanent` whether the reporter gave up for good (a 5.x.x, a relay's "permanent" severity).
 */
export function classifyFailure(status: string | null, text: string, permanent: boolean): FailureKind {
  if (SENDER_REFUSED.test(text)) return 'policy';
  const [, subject, detail] = (status ?? '').split('.');
  if (subject === '7' && !MAILBOX_REFUSED.test(text)) return 'policy';
  if ((subject === '2' && detail === '2') || MAILBOX_FULL.test(text)) return 'soft';
  return permanent ? 'hard' : 'soft';
}
