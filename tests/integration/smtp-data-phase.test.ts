// The DATA phase of a message handed to our pool as one Buffer (src/mail/data-phase.ts; the
// body checked by dot-stuffing.ts's scan, stuffed only when needed, and written with its terminator; one
// write over plain TCP, body then terminator over TLS): what reaches a real relay, byte for byte, and the
// marks a dropped connection leaves on the error (BODY_STARTED / DATA_SENT), over plain SMTP and STARTTLS.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import PostalMime from 'postal-mime';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
// Not in nodemailer's exports map: read from its file, as the reference for the bytes on the wire.
import DataStream from '../../node_modules/nodemailer/dist/esm/smtp-connection/data-stream.js';
import { sentWholeMessage, startedBody } from '../../src/mail/data-phase.ts';
import { SmtpPool } from '../../src/mail/smtp-pool.ts';

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

const envelope = { from: 'd@papers.example.org', to: ['ada@example.com'] };

/** A real smtp-server; `onData` may cut the connection. Keeps what it received and whether it was TLS. */
async function relay(options: SMTPServerOptions = {}) {
  const received: Array<{ raw: Buffer; secure: boolean }> = [];
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: 20 * 1024 * 1024,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ raw: Buffer.concat(chunks), secure: session.secure });
        cb(null, 'Ok: queued');
      });
    },
    ...options,
  });
  server.on('error', () => undefined); // cut connections are the point of some tests
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  const handle = {
    server,
    received,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    socketOf(id: string): Socket | undefined {
      for (const c of (server as unknown as { connections: Set<{ id: string; _socket: Socket }> }).connections) if (c.id === id) return c._socket;
      return undefined;
    },
  };
  open.push(handle);
  return handle;
}

function poolFor(url: string): SmtpPool {
  const pool = new SmtpPool({ url, poolSize: 1, timeoutMs: 5_000, maxRequeues: 0 });
  open.push(pool);
  return pool;
}

/** What nodemailer's DataStream writes for `message`: dots stuffed, line ends CRLF, CRLF.CRLF at the end. */
function dataStreamBytes(message: Buffer): Buffer {
  const stream = new (DataStream as unknown as new () => {
    _transform(c: Buffer, e: string, d: () => void): void;
    _flush(d: () => void): void;
    push(b: Buffer): boolean;
  })();
  const out: Buffer[] = [];
  stream.push = (b: Buffer) => (out.push(Buffer.from(b)), true);
  stream._transform(message, 'buffer', () => {});
  stream._flush(() => {});
  return Buffer.concat(out);
}

/** What a relay keeps of it: the message with CRLF line ends, ending in CRLF (smtp-server's reading). */
const kept = (text: string) => {
  const crlf = text.replace(/\r\n|\r|\n/g, '\r\n');
  return Buffer.from(crlf.endsWith('\r\n') ? crlf : `${crlf}\r\n`, 'latin1');
};

const MESSAGES: Record<string, string> = {
  'lines starting with a dot': 'Subject: dots\r\n\r\n.leading dot\r\n..two dots\r\nmid.dle\r\n.\r\n',
  'CRLF.CRLF inside': 'Subject: inside\r\n\r\nbefore\r\n.\r\nafter, still the message\r\n',
  'no CRLF at the end': 'Subject: open end\r\n\r\nthe last line has no line end',
  'a bare LF at the end, a bare CR before a dot': 'Subject: bare\r\n\r\none\rtwo\r.three\nfour\n',
  'a clean message (nothing to stuff)': `Subject: clean\r\n\r\n${'=2Eline and more text\r\n'.repeat(4_000)}`,
};

describe('DATA of a message given as one Buffer', () => {
  it('puts on the wire exactly the bytes of nodemailer\'s data stream, terminator included, in one write', async () => {
    // A minimal relay over a raw socket: PIPELINING, 354, then every byte up to the terminator.
    const wire: Buffer[] = [];
    const writes: number[] = [];
    const server: Server = createServer((socket) => {
      let data: Buffer[] | undefined;
      let text = '';
      socket.write('220 raw ESMTP\r\n');
      socket.on('data', (chunk: Buffer) => {
        if (data) {
          data.push(chunk);
          writes[writes.length - 1]!++;
          const all = Buffer.concat(data);
          if (all.subarray(-5).toString('latin1') === '\r\n.\r\n' || all.toString('latin1') === '.\r\n') {
            wire.push(all);
            data = undefined;
            socket.write('250 kept\r\n');
          }
          return;
        }
        text += chunk.toString('latin1');
        let at: number;
        while ((at = text.indexOf('\r\n')) !== -1) {
          const line = text.slice(0, at);
          text = text.slice(at + 2);
          if (/^EHLO/i.test(line)) socket.write('250-raw\r\n250 PIPELINING\r\n');
          else if (/^DATA/i.test(line)) {
            data = [];
            writes.push(0);
            socket.write('354 go on\r\n');
          } else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n');
          else socket.write('250 ok\r\n');
        }
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    open.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const pool = poolFor(`smtp://127.0.0.1:${(server.address() as { port: number }).port}`);
    for (const [name, text] of Object.entries(MESSAGES)) {
      const message = Buffer.from(text, 'latin1');
      await pool.send(envelope, message);
      expect(wire.at(-1)!.equals(dataStreamBytes(message)), name).toBe(true);
    }
    // Messages this small reach a local relay in one segment: the terminator was not written apart.
    expect(writes.slice(0, 4).every((n) => n === 1)).toBe(true);
  });

  for (const tls of [false, true]) {
    it(`is received byte for byte by a real relay${tls ? ' over STARTTLS' : ''} and parses`, async () => {
      const r = await relay(tls ? { disabledCommands: ['AUTH'] } : {});
      const pool = poolFor(`smtp://127.0.0.1:${r.port}${tls ? '?tls.rejectUnauthorized=false' : ''}`);
      for (const [name, text] of Object.entries(MESSAGES)) {
        await pool.send(envelope, Buffer.from(text, 'latin1'));
        const got = r.received.at(-1)!;
        expect(got.secure, name).toBe(tls);
        expect(got.raw.equals(kept(text)), name).toBe(true);
      }
      const [dots, inside, openEnd] = await Promise.all(r.received.slice(0, 3).map((m) => PostalMime.parse(m.raw)));
      expect(dots!.subject).toBe('dots');
      expect(dots!.text).toBe('.leading dot\n..two dots\nmid.dle\n.\n');
      expect(inside!.text).toBe('before\n.\nafter, still the message\n');
      expect(openEnd!.text?.trimEnd()).toBe('the last line has no line end');
    });
  }
});

describe('a relay that drops the connection: how far the send got', () => {
  const small = Buffer.from(`Subject: x\r\n\r\n${'a line of the message\r\n'.repeat(100)}`);
  // Larger than the socket takes at once: the client is still writing when the relay cuts.
  const big = Buffer.from(`Subject: big\r\n\r\n${`${'x'.repeat(76)}\r\n`.repeat(80_000)}`);

  async function failure(p: Promise<unknown>): Promise<Error> {
    try {
      await p;
    } catch (e) {
      return e as Error;
    }
    throw new Error('expected the send to fail');
  }

  for (const tls of [false, true]) {
    const url = (port: number) => `smtp://127.0.0.1:${port}${tls ? '?tls.rejectUnauthorized=false' : ''}`;
    const options = (more: SMTPServerOptions): SMTPServerOptions => ({ ...(tls ? { disabledCommands: ['AUTH'] } : {}), ...more });

    it(`${tls ? 'STARTTLS' : 'plain'}: cut after the final "." (whole message written): DATA_SENT`, async () => {
      const cutAfterDot: SMTPServerOptions['onData'] = (stream, session) => {
        stream.on('data', () => undefined);
        stream.on('end', () => r.socketOf(session.id)?.destroy());
      };
      const r = await relay(options({ onData: cutAfterDot }));
      for (const message of [small, big]) {
        const e = await failure(poolFor(url(r.port)).send(envelope, message));
        expect(startedBody(e), `${message.length} bytes`).toBe(true);
        expect(sentWholeMessage(e), `${message.length} bytes`).toBe(true);
      }
    });

    it(`${tls ? 'STARTTLS' : 'plain'}: cut in the middle of the body: BODY_STARTED, not DATA_SENT`, async () => {
      const r = await relay(
        options({
          onData(stream, session) {
            stream.once('data', () => r.socketOf(session.id)?.destroy());
            stream.on('error', () => undefined);
          },
        }),
      );
      const e = await failure(poolFor(url(r.port)).send(envelope, big));
      expect(startedBody(e)).toBe(true);
      expect(sentWholeMessage(e)).toBe(false);
    });

    it(`${tls ? 'STARTTLS' : 'plain'}: cut at RCPT TO, before the body: no mark`, async () => {
      const r = await relay(
        options({
          onRcptTo(_address, session) {
            r.socketOf(session.id)?.destroy();
          },
        }),
      );
      const e = await failure(poolFor(url(r.port)).send(envelope, small));
      expect(startedBody(e)).toBe(false);
      expect(sentWholeMessage(e)).toBe(false);
    });
  }
});
