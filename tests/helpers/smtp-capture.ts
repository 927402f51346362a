// A real SMTP server (smtp-server) on a free local port that keeps every message it receives,
// parsed with postal-mime, so tests can read the emails the service really sent.
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  to: string[];
  /** The SMTP envelope sender (MAIL FROM). */
  mailFrom: string;
  subject: string;
  html: string;
  text: string;
  headers: Array<{ key: string; value: string }>;
  raw: string;
}

export interface SmtpCapture {
  url: string;
  messages: CapturedMail[];
  /** Messages to one address (case-insensitive). */
  to(address: string): CapturedMail[];
  /** Resolves with the n-th (1-based) message to `address` once it has arrived. */
  waitFor(address: string, n?: number, timeoutMs?: number): Promise<CapturedMail>;
  close(): Promise<void>;
}

export async function startSmtpCapture(): Promise<SmtpCapture> {
  const messages: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        PostalMime.parse(raw)
          .then((m) => {
            messages.push({
              to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              subject: m.subject ?? '',
              html: m.html ?? '',
              text: m.text ?? '',
              headers: m.headers.map((h) => ({ key: h.key, value: h.value })),
              raw,
            });
            callback();
          })
          .catch((e: Error) => callback(e));
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  const to = (a: string) => messages.filter((m) => m.to.includes(a.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to,
    async waitFor(a, n = 1, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const got = to(a);
        if (got.length >= n) return got[n - 1]!;
        if (Date.now() > deadline) throw new Error(`no message #${n} to ${a} within ${timeoutMs} ms (got ${got.length})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
