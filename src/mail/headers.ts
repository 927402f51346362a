// Header values for the messages we build: the address shapes we accept, RFC 2047 encoded words for
// non-ASCII text (libmime, the same encoder nodemailer uses), folding at 76. The address parser is ours
// and small: MAIL_FROM and a recipient are `addr`, `Name <addr>` or `"Quoted, Name" <addr>`, and a To
// may list several of those separated by commas. Groups, comments and source routes are refused.
import { domainToASCII } from 'node:url';
import libmime from 'libmime';

export interface ParsedAddress {
  name: string;
  address: string;
}

/** An addr-spec we send to: dot-atom local part (or quoted), a domain, no spaces or brackets. */
const ADDR_SPEC = /^(?:[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\u0080-\uFFFF-]+|"(?:[^"\\\r\n]|\\.)*")@[^\s"(),:;<>@[\\\]]+$/;
/** What nodemailer writes without angle brackets. */
const PLAIN_ADDRESS = /^[^\s"(),:;<>@[\\\]]+@[^\s"(),:;<>@[\\\]]+$/;

/**
 * `a@b`, `Name <a@b>`, `"Name, Jr." <a@b>`, comma-separated. Throws a plain Error naming what is wrong;
 * the builder turns it into its own AppError.
 */
export function parseAddressList(value: string): ParsedAddress[] {
  const out: ParsedAddress[] = [];
  for (const part of splitOutsideQuotes(value)) {
    const item = part.trim();
    if (item === '') continue;
    out.push(parseOne(item));
  }
  if (out.length === 0) throw new Error('no address');
  return out;
}

function parseOne(item: string): ParsedAddress {
  const angle = /^(.*?)\s*<([^<>]*)>$/s.exec(item);
  const rawName = angle ? angle[1]!.trim() : '';
  const address = normalizeAddress((angle ? angle[2]! : item).trim());
  if (!ADDR_SPEC.test(address)) throw new Error(`"${address.slice(0, 80)}" is not an email address`);
  let name = rawName;
  if (name.startsWith('"') && name.endsWith('"') && name.length >= 2) name = name.slice(1, -1).replace(/\\(.)/g, '$1');
  else if (/[<>"]/.test(name)) throw new Error(`"${item.slice(0, 80)}" is not an address with a display name`);
  return { name, address };
}

/** The domain in ASCII (punycode) when the local part is ASCII, as nodemailer sends it. */
function normalizeAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (!/[^\x00-\x7f]/.test(domain) || /[^\x00-\x7f]/.test(local)) return address;
  const ascii = domainToASCII(domain);
  return ascii ? `${local}@${ascii}` : address;
}

function splitOutsideQuotes(value: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let angle = false;
  let from = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === '<') angle = true;
    else if (!quoted && c === '>') angle = false;
    else if (!quoted && !angle && c === ',') {
      parts.push(value.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(value.slice(from));
  return parts;
}

/** Q for mostly-Latin text, B when most of it is not (shorter that way). */
function wordEncoding(value: string): 'Q' | 'B' {
  const nonAscii = (value.match(/[^\x00-\x7f]/g) ?? []).length;
  return nonAscii < value.length - nonAscii ? 'Q' : 'B';
}

/**
 * An unstructured header value (Subject, extra headers): as it is when ASCII, else all of it as encoded
 * words (some clients drop the blanks between an encoded word and plain text: Zimbra, per nodemailer).
 */
export function encodeText(value: string): string {
  return /[^\x00-\x7f]/.test(value) ? libmime.encodeWord(value, wordEncoding(value), 52) : value;
}

/** An address header value: names quoted or encoded as needed, addresses as they are. */
export function formatAddresses(list: ParsedAddress[]): string {
  return list
    .map(({ name, address }) => {
      const addr = name === '' && PLAIN_ADDRESS.test(address) ? address : `<${address}>`;
      return name === '' ? addr : `${encodeName(name)} ${addr}`;
    })
    .join(', ');
}

function encodeName(name: string): string {
  if (/^[\w ]*$/.test(name)) return name;
  if (/^[\x20-\x7e]*$/.test(name)) return `"${name.replace(/["\\]/g, '\\$&')}"`;
  return libmime.encodeWord(name, wordEncoding(name), 52);
}

/** `Name: value` folded at whitespace to lines of at most `width` characters where it can be. */
export function foldHeader(line: string, width = 76): string {
  return libmime.foldLines(line, width);
}
