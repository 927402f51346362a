// The built-in local mail catcher: a real SMTP server on 127.0.0.1 that keeps every message it receives
// as an .eml file in a folder beside the database, so `npm start` and `digest run` work with no SMTP
// relay and a newcomer can read the digests in the browser (/inbox).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import type { Logger } from '../log.ts';

export interface CaughtSummary {
  id: string;
  receivedAt: string;
  from: string;
  to: string;
  subject: string;
}

export interface CaughtMessage extends CaughtSummary {
  html: string | undefined;
  text: string | undefined;
  headers: Array<{ key: string; value: string }>;
  raw: string;
}

const DELIVERY_HEADERS = /^(list-unsubscribe|list-unsubscribe-post|message-id|dkim-signature)$/i;

/** Reads the caught messages from the inbox folder (newest first). */
export class Inbox {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  ids(): string[] {
    return readdirSync(this.dir)
      .filter((f) => /^[\w-]+\.eml$/.test(f))
      .map((f) => f.slice(0, -4))
      .sort()
      .reverse();
  }

  async list(limit = 200): Promise<CaughtSummary[]> {
    const out: CaughtSummary[] = [];
    for (const id of this.ids().slice(0, limit)) {
      const m = await this.get(id);
      if (m) out.push({ id: m.id, receivedAt: m.receivedAt, from: m.from, to: m.to, subject: m.subject });
    }
    return out;
  }

  /** Newest first; with `to`, only messages addressed to it (case-insensitive, one of several recipients). */
  async listTo(to: string | undefined, limit = 500): Promise<CaughtSummary[]> {
    const want = to?.toLowerCase();
    const all = await this.list(limit);
    return all.filter((m) => !want || m.to.toLowerCase().split(', ').includes(want));
  }

  async get(id: string): Promise<CaughtMessage | undefined> {
    if (!/^[\w-]+$/.test(id)) return undefined;
    let raw: string;
    try {
      raw = readFileSync(join(this.dir, `${id}.eml`), 'utf8');
    } catch {
      return undefined;
    }
    const email = await PostalMime.parse(raw);
    return {
      id,
      receivedAt: new Date(Number(id.split('-')[0])).toISOString(),
      from: email.from?.address ?? '',
      to: (email.to ?? []).map((a) => a.address ?? '').join(', '),
      subject: email.subject ?? '',
      html: email.html,
      text: email.text,
      headers: email.headers.map((h) => ({ key: h.key, value: h.value })),
      raw,
    };
  }

  /** The headers a reader checks in a digest (unsubscribe links, message id, signature). */
  static deliveryHeaders(m: CaughtMessage): CaughtMessage['headers'] {
    return m.headers.filter((h) => DELIVERY_HEADERS.test(h.key));
  }

  save(raw: Buffer): string {
    const id = `${Date.now()}-${Math.random().toString(36).slice(2, 10)}`;
    writeFileSync(join(this.dir, `${id}.eml`), raw);
    return id;
  }
}

export interface MailCatcher {
  /** smtp:// URL the mailer sends to. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the catcher on the given port (0 = any free port). */
export async function startMailCatcher(inbox: Inbox, port: number, logger: Logger): Promise<MailCatcher> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    banner: 'paper-digest local mail catcher',
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const id = inbox.save(Buffer.concat(chunks));
        logger.debug({ id }, 'mail caught');
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  return {
    url: `smtp://127.0.0.1:${actual}`,
    port: actual,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** True when something accepts TCP connections on 127.0.0.1:port (a running `digest serve` catcher). */
export function portIsOpen(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
