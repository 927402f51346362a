// `digest unsuppress`, `digest opt-outs`, and the consent lines of `digest status <email>`.
import type { CliIo } from './cli-io.ts';
import type { ConsentEvent } from './consent/history.ts';
import type { Logger } from './log.ts';
import type { OperatorRoster } from './operator/roster.ts';
import { normaliseEmail } from './subscribers/records/email-address.ts';
import type { Notice } from './notices/repo.ts';
import type { OperatorFigures } from './report/figures.ts';

export async function cmdUnsuppress(roster: OperatorRoster, logger: Logger, io: CliIo, email: string, o: { reason?: string }): Promise<number> {
  const r = await roster.lift(email, o.reason ?? '');
  logger.info({ email: r.email, lifted: r.lifted.map((e) => e.kind) }, 'opt-out lifted by the operator');
  const what = r.lifted.length > 0 ? r.lifted.map((e) => `${e.kind} of ${e.at.slice(0, 10)}`).join(', ') : 'its status';
  io.out(`${r.email}: lifted ${what}; now ${r.status ?? 'no subscriber row (only its history changed)'}`);
  return 0;
}

export async function cmdOptOuts(roster: OperatorRoster, io: CliIo, limit: number): Promise<number> {
  const rows = await roster.optOuts({ limit });
  if (rows.length === 0) io.out('no opt-outs');
  for (const r of rows) io.out(`${r.email}\t${r.kind}\t${r.at}\t${r.status ?? ''}${r.subscriberId === null ? ' (deleted)' : ''}\t${r.detail}`);
  return 0;
}

/** One line: what the last confirmation email to this subscriber did. */
export function noticeLine(n: Notice | undefined): string | undefined {
  if (!n) return undefined;
  const what = n.kind === 'confirm' ? 'confirmation email' : '"already subscribed" email';
  switch (n.status) {
    case 'sent':
      return `${what}: sent ${n.sentAt}`;
    case 'failed':
      return `${what}: FAILED for good (${n.attempts} attempts, asked ${n.createdAt}): ${n.smtpResponse ?? ''}`;
    case 'retry':
      return `${what}: not sent yet, retry at ${n.nextAttemptAt} (${n.attempts} attempts so far): ${n.smtpResponse ?? ''}`;
    case 'unknown':
      return `${what}: outcome unknown (in flight when its process stopped), asked ${n.createdAt}`;
    default:
      return `${what}: waiting to be sent (asked ${n.createdAt})`;
  }
}

/** The consent lines of `digest status <email>`: the last confirmation email, then the opt-out history (newest last). */
export function consentLines(lastNotice: Notice | undefined, history: readonly ConsentEvent[]): string[] {
  const out: string[] = [];
  const n = noticeLine(lastNotice);
  if (n) out.push(n);
  if (history.length > 0) out.push(`opt-out history: ${history.slice().reverse().map(eventText).join('; ')}`);
  return out;
}

/** For an address with no subscriber row: its kept opt-out history, or undefined when it has none. */
export async function deletedHistoryLine(
  rawEmail: string,
  historyOf: (email: string) => readonly ConsentEvent[] | Promise<readonly ConsentEvent[]>,
): Promise<string | undefined> {
  let email: string;
  try {
    email = normaliseEmail(rawEmail);
  } catch {
    return undefined;
  }
  const history = await historyOf(email);
  if (history.length === 0) return undefined;
  return `${email}\tno subscriber (deleted)\topt-out history: ${history.slice().reverse().map(eventText).join('; ')}`;
}

function eventText(e: ConsentEvent): string {
  return `${e.kind} ${e.at.slice(0, 16).replace('T', ' ')}${e.detail ? ` (${e.detail})` : ''}`;
}

/** `digest status`: confirmation emails of the last 24 hours (with the last failure) and opt-outs of the last 30 days. */
export function consentStatusLines(f: OperatorFigures, last: Notice | undefined): string[] {
  const n = f.notices!;
  const waiting = n.planned + n.sending + n.retry;
  const out = [`confirmation emails (24 h): sent ${n.sent}, failed ${n.failed}, waiting ${waiting}${n.retry ? ` (${n.retry} to retry after a relay failure)` : ''}${n.unknown ? `, unknown ${n.unknown}` : ''}`];
  if (last && (n.failed > 0 || n.retry > 0)) out.push(`\tlast failure: ${last.email} ${last.status}: ${last.smtpResponse ?? ''}`);
  const o = f.optOuts!;
  out.push(`opt-outs (30 days): unsubscribe ${o.unsubscribe}, complaint ${o.complaint}, hard bounce ${o['hard-bounce']}, operator ${o.operator}; lifted ${o.lifted}, re-confirmed ${o.reconfirmed}`);
  return out;
}
