// Reads what comes back to the bounce address: RFC 3464 delivery status notifications (multipart/report;
// report-type=delivery-status) and RFC 5965 feedback reports (report-type=feedback-report), parsed with
// postal-mime, whose report parts (message/delivery-status, message/feedback-report) come out as
// attachments we read as header blocks. It says what happened (hard / soft bounce, policy block, complaint) and which
// envelope addresses the report carries: the caller keeps only those whose VERP tag verifies, and never
// trusts an address quoted in the body (Final-Recipient, To:) to name a subscriber.
import PostalMime from 'postal-mime';
import { classifyFailure, type FailureKind } from './classify.ts';

export type ReportKind = FailureKind | 'complaint';

export interface ParsedReport {
  kind: ReportKind | 'ignore';
  /** Enhanced status code ('5.1.1') of a bounce. */
  status: string | null;
  /** Diagnostic-Code, or the feedback type; one line, at most 500 characters. */
  detail: string;
  /**
   * Addresses that may hold our VERP tag, besides the envelope recipient: an ARF report's
   * Original-Mail-From and the returned message's Return-Path (feedback loops often mail a fixed
   * address, not the envelope sender).
   */
  tagCandidates: string[];
}

/** A block of "Name: value" fields (continuation lines folded in), possibly several separated by blank lines. */
export function fieldGroups(text: string): Array<Map<string, string>> {
  const groups: Array<Map<string, string>> = [];
  let current = new Map<string, string>();
  let last: string | undefined;
  for (const line of text.replace(/\r\n/g, '\n').split('\n')) {
    if (line.trim() === '') {
      if (current.size) groups.push(current);
      current = new Map();
      last = undefined;
    } else if (/^[ \t]/.test(line) && last) {
      current.set(last, `${current.get(last)} ${line.trim()}`);
    } else {
      const m = /^([A-Za-z0-9-]+)\s*:\s*(.*)$/.exec(line);
      if (!m) continue;
      last = m[1]!.toLowerCase();
      if (!current.has(last)) current.set(last, m[2]!.trim());
    }
  }
  if (current.size) groups.push(current);
  return groups;
}

function attachmentText(content: ArrayBuffer | Uint8Array | string): string {
  if (typeof content === 'string') return content;
  return Buffer.from(content instanceof Uint8Array ? content : new Uint8Array(content)).toString('utf8');
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 500);

/** The address inside "rfc822; a@b", "<a@b>" or "a@b". */
function bareAddress(v: string | undefined): string | undefined {
  if (!v) return undefined;
  const m = /<?([^<>\s;]+@[^<>\s;]+)>?\s*$/.exec(v.trim());
  return m?.[1];
}

export async function parseReport(raw: Buffer | string): Promise<ParsedReport> {
  const mail = await PostalMime.parse(raw);
  const candidates: string[] = [];
  const part = (type: string) => mail.attachments.find((a) => a.mimeType.toLowerCase() === type);
  // The returned message (or its headers): its Return-Path is the envelope sender we used.
  const original = part('message/rfc822') ?? part('text/rfc822-headers');
  if (original) {
    const headers = fieldGroups(attachmentText(original.content))[0];
    const rp = bareAddress(headers?.get('return-path'));
    if (rp) candidates.push(rp);
  }

  const feedback = part('message/feedback-report');
  if (feedback) {
    const f = fieldGroups(attachmentText(feedback.content))[0] ?? new Map<string, string>();
    const from = bareAddress(f.get('original-mail-from'));
    if (from) candidates.unshift(from);
    const type = (f.get('feedback-type') ?? '').toLowerCase();
    // abuse (the "this is spam" button), fraud and virus are complaints; not-spam, auth-failure, dmarc are not.
    const complaint = ['abuse', 'fraud', 'virus', 'other'].includes(type);
    return { kind: complaint ? 'complaint' : 'ignore', status: null, detail: oneLine(`feedback-type ${type || 'missing'}`), tagCandidates: candidates };
  }

  const dsn = part('message/delivery-status');
  if (!dsn) return { kind: 'ignore', status: null, detail: 'not a delivery status or feedback report', tagCandidates: candidates };
  // The first group is per message (Reporting-MTA…), the others one per recipient. We sent one recipient.
  const groups = fieldGroups(attachmentText(dsn.content));
  const recipient = groups.slice(1).find((g) => g.has('action') || g.has('status')) ?? groups.find((g) => g.has('status'));
  if (!recipient) return { kind: 'ignore', status: null, detail: 'delivery-status part without a recipient', tagCandidates: candidates };
  const action = (recipient.get('action') ?? '').toLowerCase();
  const status = /^([245])\.\d{1,3}\.\d{1,3}/.exec(recipient.get('status') ?? '')?.[0] ?? null;
  const detail = oneLine(recipient.get('diagnostic-code') ?? recipient.get('status') ?? action);
  // "delayed" / "delivered" / "relayed" / "expanded" are not failures. A failure is a policy block, soft or hard
  // (classify.ts): a 4.x.x failure means the remote gave up after temporary errors.
  if (action !== 'failed' || !status) return { kind: 'ignore', status, detail, tagCandidates: candidates };
  return { kind: classifyFailure(status, detail, status.startsWith('5')), status, detail, tagCandidates: candidates };
}
