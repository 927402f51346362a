// The 7bit HTML body's shared parts (html-body.ts has the encoder and the writer): the states of the
// HTML tokenizer we follow to know where a line may be broken, the character references we write, the
// size a text takes once encoded (what the clipping size counts), and the decoder that gives back the
// exact HTML that was encoded (for .html of a rendered email, tests and `digest preview`).

/** States of the tokenizer, as far as breaks and references care. */
export const S_TEXT = 0;
export const S_TAG = 1;
export const S_DQ = 2;
export const S_SQ = 3;
export const S_COMMENT = 4;
export const S_RAW = 5;

/**
 * `&#0<decimal>;` written digit by digit (a template string and Buffer#write per character cost ~10x
 * more: the middle dots of every reader's feedback line made the bench's render 20% slower that way).
 */
export function writeRef(out: Buffer, o: number, c: number): number {
  out[o++] = 0x26;
  out[o++] = 0x23;
  out[o++] = 0x30;
  let div = 1;
  while (div * 10 <= c) div *= 10;
  for (; div >= 1; div = Math.floor(div / 10)) out[o++] = 0x30 + (Math.floor(c / div) % 10);
  out[o++] = 0x3b;
  return o;
}

/** Length of writeRef's reference for code point c. */
export function refLength(c: number): number {
  return 4 + (c < 10 ? 1 : c < 100 ? 2 : c < 1_000 ? 3 : c < 10_000 ? 4 : c < 100_000 ? 5 : c < 1_000_000 ? 6 : 7);
}

/** Does a tag named style or script start at `at`? (Looked at on every '<': no slice, no regex first.) */
export function opensRaw(text: string, at: number): boolean {
  const c = text.charCodeAt(at) | 0x20;
  if (c !== 0x73 /* s */) return false;
  return /^(?:style|script)[\s>]/i.test(text.slice(at, at + 7));
}

export function closesRaw(text: string, at: number): boolean {
  if (text.charCodeAt(at) !== 0x2f) return false;
  return opensRaw(text, at + 1);
}

/**
 * The tokenizer's step on the ASCII character `c` at `i` of `text`: the next state * 2, plus 1 when the tag
 * being read opens <style> or <script> (its content is raw text). `dashes`: the two characters before `c`
 * were "--" (a comment ends at "-->"). One machine for the encoder (html-body.ts) and the decoder below,
 * which must agree on every state to give back the exact HTML.
 */
export function nextState(state: number, rawNext: boolean, c: number, text: string, i: number, dashes: boolean): number {
  if (state === S_TEXT) {
    if (c === 0x3c) {
      if (text.startsWith('!--', i + 1)) return S_COMMENT * 2;
      return S_TAG * 2 + (opensRaw(text, i + 1) ? 1 : 0);
    }
  } else if (state === S_TAG) {
    if (c === 0x22) return S_DQ * 2 + (rawNext ? 1 : 0);
    if (c === 0x27) return S_SQ * 2 + (rawNext ? 1 : 0);
    if (c === 0x3e) return rawNext ? S_RAW * 2 : S_TEXT * 2;
  } else if (state === S_DQ) {
    if (c === 0x22) return S_TAG * 2 + (rawNext ? 1 : 0);
  } else if (state === S_SQ) {
    if (c === 0x27) return S_TAG * 2 + (rawNext ? 1 : 0);
  } else if (state === S_COMMENT) {
    if (c === 0x3e && dashes) return S_TEXT * 2;
  } else if (c === 0x3c && closesRaw(text, i + 1)) {
    return S_TAG * 2;
  }
  return state * 2 + (rawNext ? 1 : 0);
}

/**
 * The HTML that was encoded, exactly: our references decoded, the breaks that stand for a space turned
 * back into one, CRLF in <style> and comments back to LF. For readers of a rendered email's .html (tests,
 * `digest preview`), never on the send path. Input: the part's bytes after the transfer decoding.
 */
export function decodeHtmlBody(bytes: Buffer): string {
  // UTF-8: the 7bit bytes are ASCII; the quoted-printable fallback may hold UTF-8 in comments or <style>.
  const s = bytes.toString('utf8');
  let out = '';
  let from = 0;
  let state = S_TEXT;
  let rawNext = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // CRLF, or LF alone when a decoder before this one made it so (the 7bit bytes have no other LF).
    if (c === 0x0a || (c === 0x0d && s.charCodeAt(i + 1) === 0x0a)) {
      out += s.slice(from, i) + (state === S_COMMENT || state === S_RAW ? '\n' : ' ');
      if (c === 0x0d) i++;
      from = i + 1;
      continue;
    }
    if (c === 0x26 && s.charCodeAt(i + 1) === 0x23 && s.charCodeAt(i + 2) === 0x30 && state !== S_COMMENT && state !== S_RAW) {
      const end = s.indexOf(';', i + 3);
      const digits = s.slice(i + 3, end);
      if (end > 0 && /^\d{1,7}$/.test(digits)) {
        out += s.slice(from, i) + String.fromCodePoint(Number(digits));
        i = end;
        from = end + 1;
        continue;
      }
    }
    if (c === 0x3c || c === 0x3e || c === 0x22 || c === 0x27) {
      const k = nextState(state, rawNext, c, s, i, s.charCodeAt(i - 1) === 0x2d && s.charCodeAt(i - 2) === 0x2d);
      state = k >> 1;
      rawNext = (k & 1) === 1;
    }
  }
  return out + s.slice(from);
}

const PLAIN = /^[\x20-\x7e\t\n]*$/;

/**
 * Size of `text` in a 7bit body as HtmlBodyWriter.size counts it: what the clipping size must count, since
 * a client receives the references, not the characters. A line break counts one (as in <style> and
 * comments, the only places our templates have them; in text it would be a 6-byte reference). Mostly
 * ASCII: one regex test.
 */
export function htmlWireLength(text: string): number {
  if (PLAIN.test(text)) return text.length;
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x20 && c < 0x7f) || c === 0x09 || c === 0x0a) continue;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        n += refLength(0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00)) - 2;
        i++;
        continue;
      }
    }
    n += refLength(c >= 0xd800 && c <= 0xdfff ? 0xfffd : c) - 1;
  }
  return n;
}
