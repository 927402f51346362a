// DKIM signing (RFC 6376) of a whole built message: rsa-sha256, relaxed/relaxed, the headers we name.
// Ours rather than nodemailer's signer (reachable only through its private files): a message here is
// already one Buffer, so the signer is two hashes and one RSA signature, no streams.
import { createHash, createPrivateKey, createSign, type KeyObject } from 'node:crypto';
import { domainToASCII } from 'node:url';
import libmime from 'libmime';
import { AppError } from '../errors.ts';

export interface DkimOptions {
  domainName: string;
  keySelector: string;
  /** PEM. */
  privateKey: string;
  /** Colon-separated header names to sign (those present in the message are signed). */
  headerFieldNames: string;
}

export class DkimSigner {
  private readonly key: KeyObject;
  private readonly fields: string[];
  private readonly domain: string;
  private readonly selector: string;

  constructor(opts: DkimOptions) {
    try {
      this.key = createPrivateKey(opts.privateKey);
    } catch (e) {
      throw new AppError('DKIM_KEY_INVALID', `DKIM private key: cannot be read (${(e as Error).message})`, { cause: e });
    }
    const clean = (v: string) => v.replace(/[\x00-\x1f\x7f;=\s]/g, '');
    this.domain = domainToASCII(clean(opts.domainName)) || clean(opts.domainName);
    this.selector = clean(opts.keySelector);
    this.fields = [...new Set(opts.headerFieldNames.toLowerCase().split(':').map((f) => f.trim()).filter(Boolean))];
  }

  /** The message with its DKIM-Signature header first. */
  sign(raw: Buffer): Buffer {
    const split = headerEnd(raw);
    const headers = parseHeaders(raw.toString('latin1', 0, split.headerEnd));
    const bodyHash = createHash('sha256').update(relaxedBody(raw.toString('latin1', split.bodyStart)), 'latin1').digest('base64');
    // For each name, the last instance of that header (RFC 6376 5.4.2).
    const signed: string[] = [];
    let canonical = '';
    for (const field of this.fields) {
      const line = headers.findLast((h) => h.key === field);
      if (!line) continue;
      signed.push(field);
      canonical += `${field}:${relaxedValue(line.line)}\r\n`;
    }
    const tags = ['v=1', 'a=rsa-sha256', 'c=relaxed/relaxed', `d=${this.domain}`, 'q=dns/txt', `s=${this.selector}`, `bh=${bodyHash}`, `h=${signed.join(':')}`];
    const head = `${libmime.foldLines(`DKIM-Signature: ${tags.join('; ')}`, 76)};\r\n b=`;
    canonical += `dkim-signature:${relaxedValue(head)}`;
    const signature = createSign('RSA-SHA256').update(canonical, 'latin1').sign(this.key, 'base64');
    const header = `${head}${signature.replace(/(^.{73}|.{75}(?!\r?\n|\r))/g, '$&\r\n ').trim()}\r\n`;
    return Buffer.concat([Buffer.from(header, 'latin1'), raw]);
  }
}

function headerEnd(raw: Buffer): { headerEnd: number; bodyStart: number } {
  const at = raw.indexOf('\r\n\r\n');
  if (at >= 0) return { headerEnd: at + 2, bodyStart: at + 4 };
  return { headerEnd: raw.length, bodyStart: raw.length };
}

/** Header fields, continuation lines joined to theirs; keys lower-cased. */
function parseHeaders(block: string): Array<{ key: string; line: string }> {
  const out: Array<{ key: string; line: string }> = [];
  for (const piece of block.split('\r\n')) {
    if (piece === '') continue;
    const last = out[out.length - 1];
    if ((piece[0] === ' ' || piece[0] === '\t') && last) last.line += `\r\n${piece}`;
    else out.push({ key: piece.slice(0, piece.indexOf(':')).trim().toLowerCase(), line: piece });
  }
  return out;
}

/** Relaxed header canonicalisation (3.4.2): unfolded, runs of SP/HTAB as one SP, trimmed. */
function relaxedValue(line: string): string {
  return line
    .slice(line.indexOf(':') + 1)
    .replace(/\r?\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

/** Relaxed body canonicalisation (3.4.4): no WSP at line ends, WSP runs as one SP, no empty lines at the end. */
export function relaxedBody(body: string): string {
  let s = body.replace(/\r?\n/g, '\r\n');
  if (/[ \t]\r\n|[ \t]$|\t|  /.test(s)) s = s.replace(/[ \t]+(?=\r\n|$)/g, '').replace(/[ \t]+/g, ' ');
  s = s.replace(/(?:\r\n)+$/, '');
  return s === '' ? '' : `${s}\r\n`;
}
