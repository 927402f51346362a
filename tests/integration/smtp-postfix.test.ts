// Our SMTP client against Postfix's smtp-sink (a C relay, not Node's smtp-server): plain delivery,
// no PIPELINING, and each stage's answers as Postfix gives them: 4xx / 5xx to RCPT TO, 421 and a silent
// disconnect at RCPT TO, a silent disconnect after the final "." (ambiguous: the message may be queued).
// Skipped, saying so, where Postfix is not installed (apt-get install postfix).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.ts';
import { createSmtpMailer } from '../../src/mail/smtp-mailer.ts';
import type { Mailer, OutgoingMail } from '../../src/mail/types.ts';
import { failureOf } from '../helpers/mailer-on-sink.ts';

const SMTP_SINK = '/usr/sbin/smtp-sink';
const present = existsSync(SMTP_SINK);
if (!present) console.warn(`smtp-postfix.test.ts: skipped, ${SMTP_SINK} is missing (apt-get install postfix)`);

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** smtp-sink with `flags`; `dump` receives every transaction it accepted. */
async function postfixSink(flags: string[]): Promise<{ url: string; dump: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'pd-smtp-sink-'));
  chmodSync(dir, 0o777);
  const dump = join(dir, 'dump');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
  const child: ChildProcess = spawn(SMTP_SINK, [...asRoot, '-D', dump, ...flags, `127.0.0.1:${port}`, '100'], { stdio: 'ignore' });
  open.push({ close: () => child.kill('SIGTERM') });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1', () => (c.end(), resolve(true)));
      c.once('error', () => resolve(false));
    });
    if (up) return { url: `smtp://127.0.0.1:${port}`, dump };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('smtp-sink did not start');
}

function mailerFor(url: string): Mailer {
  const m = createSmtpMailer({ url, from: 'Digest <d@papers.example.org>', poolSize: 2, ratePerSecond: 0, timeoutMs: 5_000, logger: silentLogger });
  open.push(m);
  return m;
}

const mail = (to: string, i = 0): OutgoingMail => ({ to, subject: `Your papers ${i}`, html: `<p>paper ${i}</p>`, text: `.paper ${i}\n.\nend` });

describe.skipIf(!present)('SMTP client against Postfix smtp-sink', () => {
  for (const [name, flags] of [['with PIPELINING', []], ['without PIPELINING', ['-p']]] as const) {
    it(`delivers, ${name}: 20 messages over a pool of 2, each accepted with Postfix's 250`, async () => {
      const sink = await postfixSink([...flags]);
      const m = mailerFor(sink.url);
      const sent = await Promise.all(Array.from({ length: 20 }, (_, i) => m.send(mail(`r${i}@example.com`, i))));
      expect(sent.every((s) => s.response.startsWith('250'))).toBe(true);
      await m.close();
      const dumped = readFileSync(sink.dump, 'latin1');
      for (let i = 0; i < 20; i++) expect(dumped).toContain(`Subject: Your papers ${i}\n`);
    });
  }

  it("each stage's answer keeps its meaning: 4xx temporary, 5xx permanent, 421 and a drop at RCPT TO the relay's", async () => {
    expect(await failureOf(mailerFor((await postfixSink(['-r', 'rcpt'])).url), mail('a@example.com'))).toMatchObject({ kind: 'temporary', responseCode: 450 });
    expect(await failureOf(mailerFor((await postfixSink(['-f', 'rcpt'])).url), mail('a@example.com'))).toMatchObject({ kind: 'permanent', responseCode: 500 });
    expect(await failureOf(mailerFor((await postfixSink(['-Q', 'rcpt'])).url), mail('a@example.com'))).toMatchObject({ kind: 'connection', responseCode: 421 });
    expect(await failureOf(mailerFor((await postfixSink(['-q', 'rcpt'])).url), mail('a@example.com'))).toMatchObject({ kind: 'connection' });
  });

  it('a disconnect after the final "." without an answer is ambiguous (never resent)', async () => {
    const e = await failureOf(mailerFor((await postfixSink(['-q', '.'])).url), mail('a@example.com'));
    expect(e.kind).toBe('ambiguous');
    expect(e.temporary).toBe(false);
  });
});
