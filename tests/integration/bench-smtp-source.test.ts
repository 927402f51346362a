// The bench's second ceiling (issue 41's own: bench/ceiling-smtp-source.ts) sends real messages of the size
// it is asked for: Postfix's smtp-source into a real SMTP server, every message counted and measured.
// Skipped where Postfix is not installed (the bench then reports the pool's ceiling alone).
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { measureSmtpSourceCeiling, SMTP_SOURCE } from '../../bench/ceiling-smtp-source.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';

const missing = !existsSync(SMTP_SOURCE);
let sink: SmtpSink | undefined;
afterEach(async () => {
  await sink?.stop();
  sink = undefined;
});

describe.skipIf(missing)("issue 41's ceiling: smtp-source into the same sink", () => {
  it.each([46_123, 105_000])('every message arrives, %i bytes each, with the subject and addresses given', async (bytes) => {
    sink = await SmtpSink.start();
    const subject = 'Your papers for Monday — 188 new';
    const result = await measureSmtpSourceCeiling({ url: sink.url, sessions: 3, messageBytes: bytes, messages: 9, from: 'digest@bench.example', to: 'reader@bench.example', subject });
    expect(result).toMatchObject({ messages: 9, sessions: 3, reuse: true });
    expect(sink.messages).toHaveLength(9);
    // smtp-source's own quirk: with several sessions its Message-Id counter can run past zero for the last
    // messages, printed as 8 hex digits instead of 4 (4 bytes more); at most one such message a session but one.
    const wrapped = (raw: Buffer) => /^Message-Id: <[0-9a-f]+\.[0-9a-f]+\.[0-9a-f]{8}@/im.test(raw.subarray(0, 400).toString('latin1'));
    expect(sink.messages.filter((m) => wrapped(m.raw)).length).toBeLessThanOrEqual(2);
    for (const m of sink.messages) {
      expect(Math.abs(m.raw.length - (wrapped(m.raw) ? 4 : 0) - bytes)).toBeLessThanOrEqual(2);
      expect(m.from).toBe('digest@bench.example');
      expect(m.to).toEqual(['reader@bench.example']);
    }
    const parsed = await sink.messages[0]!.parse();
    expect(parsed.subject).toBe(subject);
  });
});
