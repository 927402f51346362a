// The built-in bounce receiver: an SMTP server (smtp-server) on BOUNCE_SMTP_PORT, off by default, for the
// MX of BOUNCE_ADDRESS's domain (or a forward from it). It accepts mail only for BOUNCE_ADDRESS and its
// VERP forms; a tagged recipient whose tag does not verify is refused at RCPT (550 5.7.1), so a forged
// bounce never gets its body in. Each message is read as a DSN or an ARF report (reports.ts) and mapped
// to a digest only through a verified tag: the envelope recipient's, else (feedback loops that mail the
// bare address) the report's Original-Mail-From or the returned message's Return-Path.
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';
import type { Logger } from '../log.ts';
import { parseReport } from './reports.ts';
import type { BounceOutcome } from './service.ts';
import { taggedDigestIn, type BounceStore } from './store.ts';
import type { Verp } from './verp.ts';

/** Largest report accepted: DSNs and ARF reports carry at most the returned message. */
export const MAX_REPORT_BYTES = 2 * 1024 * 1024;

export interface BounceReceiver {
  port: number;
  close(): Promise<void>;
}

export interface ReceiverDeps {
  /** The store the digests were sent from: the SQLite file, or PostgreSQL with DATABASE_URL (store.ts). */
  store: BounceStore;
  logger: Logger;
  verp: Verp;
  /** Called after each message is handled (tests wait on it). */
  onReport?: (outcome: BounceOutcome | 'no-tag' | 'ignored') => void;
}

function smtpError(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code });
}

async function readAll(stream: SMTPServerDataStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Handles one received message; returns what it did. Exported for the webhook-free path in tests. */
export async function handleReportMessage(deps: ReceiverDeps, raw: Buffer, recipients: string[]): Promise<BounceOutcome | 'no-tag' | 'ignored'> {
  const report = await parseReport(raw);
  if (report.kind === 'ignore') {
    deps.logger.info({ detail: report.detail }, 'bounce mailbox: not a failure or complaint, ignored');
    return 'ignored';
  }
  let tagged = null;
  for (const a of [...recipients, ...report.tagCandidates]) if ((tagged = await taggedDigestIn(deps.store, deps.verp, a))) break;
  if (!tagged) {
    deps.logger.warn({ kind: report.kind }, 'bounce mailbox: report without a valid VERP tag, ignored');
    return 'no-tag';
  }
  return deps.store.record({ digestId: tagged.digestId, kind: report.kind, channel: 'smtp', status: report.status, detail: report.detail });
}

export async function startBounceReceiver(deps: ReceiverDeps, opts: { port: number; host: string }): Promise<BounceReceiver> {
  const log: Logger = deps.logger.child({ component: 'bounce-receiver' });
  const server = new SMTPServer({
    name: deps.verp.domain,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_REPORT_BYTES,
    // A public port: bounded connections and a short idle timeout, so it cannot be held open cheaply.
    maxClients: 50,
    socketTimeout: 60_000,
    logger: false,
    banner: 'bounce receiver',
    onRcptTo(address, _session, callback) {
      const a = address.address;
      if (!deps.verp.isBounceMailbox(a)) return callback(smtpError(550, '5.1.1 no such mailbox here'));
      // The bare mailbox is fine (feedback loops); a tagged form must carry a tag made for an existing row
      // (a late bounce for a deleted digest is refused too: nothing could act on it).
      if (a.toLowerCase() === deps.verp.bounceAddress.toLowerCase()) return callback();
      taggedDigestIn(deps.store, deps.verp, a).then(
        (tagged) => callback(tagged ? undefined : smtpError(550, '5.7.1 unknown or forged bounce tag')),
        (e: unknown) => {
          log.error({ err: e }, 'bounce tag could not be checked');
          callback(smtpError(451, '4.3.0 could not check the address, try again later'));
        },
      );
    },
    onData(stream, session, callback) {
      readAll(stream)
        .then(async (raw) => {
          if ((stream as SMTPServerDataStream & { sizeExceeded?: boolean }).sizeExceeded) {
            return callback(smtpError(552, '5.3.4 report too big'));
          }
          const outcome = await handleReportMessage(deps, raw, session.envelope.rcptTo.map((r) => r.address));
          deps.onReport?.(outcome);
          callback();
        })
        .catch((e: unknown) => {
          log.error({ err: e }, 'bounce report could not be handled');
          // Temporary: the sending MTA keeps it and tries again (the database may have been busy).
          callback(smtpError(451, '4.3.0 could not process the report, try again later'));
        });
    },
  });
  server.on('error', (e) => log.error({ err: e }, 'bounce receiver error'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  log.info({ port, address: deps.verp.bounceAddress }, 'bounce receiver listening');
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
