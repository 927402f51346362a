// Splits a topic query into tokens: words, phrases, parentheses, `-`, `OR` and field prefixes.
// Positions are 1-based character positions in the string as given, for error messages.
import { normalizeArxivId } from '../ingest/normalize.ts';
import { topicError } from './errors.ts';

/** FTS5 columns of papers_fts a query can search. */
export type Column = 'title' | 'abstract' | 'authors' | 'categories';

/** Field prefixes a subscriber may type, and the columns each one searches. */
export const FIELD_PREFIXES: Readonly<Record<string, Column>> = {
  title: 'title',
  abstract: 'abstract',
  author: 'authors',
  authors: 'authors',
  category: 'categories',
  categories: 'categories',
};

export type Token =
  | { type: 'lparen'; pos: number }
  | { type: 'rparen'; pos: number }
  /** `-` directly before a word, phrase, group or field prefix. */
  | { type: 'neg'; pos: number }
  /** The uppercase keyword OR. */
  | { type: 'or'; pos: number }
  | { type: 'field'; pos: number; name: string; column: Column }
  /** An unquoted word; `prefix` when it ended with `*` (the stars are removed from raw). */
  | { type: 'word'; pos: number; raw: string; prefix: boolean }
  /** A quoted phrase (raw is the text between the quotes); `prefix` when `*` follows the closing quote. */
  | { type: 'phrase'; pos: number; raw: string; prefix: boolean }
  /** `upvotes>=N`: a filter on the paper's upvotes, not a word. */
  | { type: 'upvotes'; pos: number; min: number }
  /** `like:<arXiv id>[,<id>…]`: papers resembling the examples (ids normalised, as typed order). */
  | { type: 'like'; pos: number; ids: string[] };

/** At most this many examples in one like: topic. */
export const MAX_LIKE_IDS = 5;
/** upvotes>=N takes N up to this (more than any paper has). */
const MAX_UPVOTES = 1_000_000;

const SPACE = /\s/u;
/** Characters that end an unquoted word. */
const WORD_END = /[\s()"]/u;
/** `name:` at the start of a word: a candidate field prefix. */
const FIELD_AT = /^([A-Za-z]+):/;

function isSpace(ch: string | undefined): boolean {
  return ch !== undefined && SPACE.test(ch);
}

/** Tokenises `text`; throws TOPIC_INVALID for an unbalanced quote or an unknown field prefix. */
export function lex(text: string): Token[] {
  const chars = Array.from(text); // code points, so positions count characters as a user sees them
  const tokens: Token[] = [];
  let i = 0;
  while (i < chars.length) {
    const ch = chars[i]!;
    const pos = i + 1;
    if (isSpace(ch)) {
      i++;
    } else if (ch === '(') {
      tokens.push({ type: 'lparen', pos });
      i++;
    } else if (ch === ')') {
      tokens.push({ type: 'rparen', pos });
      i++;
    } else if (ch === '"') {
      const close = chars.indexOf('"', i + 1);
      if (close < 0) throw topicError(`unbalanced quote at position ${pos}`, pos);
      const raw = chars.slice(i + 1, close).join('');
      i = close + 1;
      let prefix = false;
      while (chars[i] === '*') {
        prefix = true;
        i++;
      }
      tokens.push({ type: 'phrase', pos, raw, prefix });
    } else if (ch === '-' && i + 1 < chars.length && !isSpace(chars[i + 1]) && chars[i + 1] !== ')') {
      tokens.push({ type: 'neg', pos });
      i++;
    } else if (/^upvotes\b/i.test(chars.slice(i, i + 8).join('')) && /[<>=]/.test(chars[i + 7] ?? '')) {
      const u = lexUpvotes(chars, i);
      tokens.push(u.token);
      i = u.end;
    } else if (chars.slice(i, i + 5).join('').toLowerCase() === 'like:') {
      const l = lexLike(chars, i);
      tokens.push(l.token);
      i = l.end;
    } else {
      const field = lexField(chars, i);
      if (field) {
        tokens.push({ type: 'field', pos, name: field.name, column: field.column });
        i = field.end;
        continue;
      }
      let end = i;
      while (end < chars.length && !WORD_END.test(chars[end]!)) end++;
      const word = chars.slice(i, end).join('');
      i = end;
      if (word === 'OR') tokens.push({ type: 'or', pos });
      else if (word === 'AND') continue; // explicit AND means the same as a space
      else {
        const stripped = word.replace(/\*+$/u, '');
        tokens.push({ type: 'word', pos, raw: stripped, prefix: stripped !== word });
      }
    }
  }
  return tokens;
}

/** Characters up to the next space or parenthesis (the operand of upvotes>= or like:). */
function operandEnd(chars: string[], from: number): number {
  let end = from;
  while (end < chars.length && !isSpace(chars[end]) && chars[end] !== '(' && chars[end] !== ')') end++;
  return end;
}

/** `upvotes>=N`: any other comparison, or a missing or non-integer N, is an error naming the position. */
function lexUpvotes(chars: string[], i: number): { token: Token; end: number } {
  const pos = i + 1;
  let at = i + 7;
  let op = '';
  while (at < chars.length && /[<>=!]/.test(chars[at]!)) op += chars[at++];
  if (op !== '>=') {
    throw topicError(`'upvotes${op}' at position ${pos} is not supported: write upvotes>=N, e.g. upvotes>=10`, pos);
  }
  const end = operandEnd(chars, at);
  const raw = chars.slice(at, end).join('');
  if (raw === '') throw topicError(`expected a whole number after 'upvotes>=' at position ${at + 1}`, at + 1);
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_UPVOTES) {
    throw topicError(`'${raw.slice(0, 20)}' at position ${at + 1} is not a whole number from 0 to ${MAX_UPVOTES} (upvotes>=N)`, at + 1);
  }
  return { token: { type: 'upvotes', pos, min: Number(raw) }, end };
}

/** `like:2501.00010,2502.00001`: every id must be an arXiv id; errors name the id's position. */
function lexLike(chars: string[], i: number): { token: Token; end: number } {
  const pos = i + 1;
  const end = operandEnd(chars, i + 5);
  if (end === i + 5) throw topicError(`expected an arXiv id after 'like:' at position ${pos} (e.g. like:2501.00010)`, pos);
  const ids: string[] = [];
  let at = i + 5;
  for (const part of chars.slice(i + 5, end).join('').split(',')) {
    const id = normalizeArxivId(part);
    if (id === null) {
      throw topicError(
        part === ''
          ? `empty arXiv id in like: at position ${at + 1}`
          : `'${part.slice(0, 40)}' at position ${at + 1} is not an arXiv id (e.g. like:2501.00010)`,
      );
    }
    if (!ids.includes(id)) ids.push(id);
    at += Array.from(part).length + 1;
  }
  if (ids.length > MAX_LIKE_IDS) throw topicError(`like: at position ${pos} names ${ids.length} papers; at most ${MAX_LIKE_IDS}`, pos);
  return { token: { type: 'like', pos, ids }, end };
}

/**
 * `title:foo`, `author:"…"`, `category:(…)`, or a known field followed by spaces (`title: foo`).
 * An unknown name directly followed by a term (`foo:bar`) is an error; an unknown name followed by a
 * space (`Part I: Tricks`) is ordinary text.
 */
function lexField(chars: string[], i: number): { name: string; column: Column; end: number } | null {
  const m = FIELD_AT.exec(chars.slice(i, i + 40).join(''));
  if (!m) return null;
  const name = m[1]!.toLowerCase();
  const after = i + m[0].length;
  const next = chars[after];
  const column = Object.hasOwn(FIELD_PREFIXES, name) ? FIELD_PREFIXES[name] : undefined;
  if (column === undefined) {
    if (next === undefined || isSpace(next) || next === ')') return null;
    throw topicError(
      `unknown field prefix '${m[1]}:' at position ${i + 1} (use title:, abstract:, author:, category:, like:<arXiv id> or upvotes>=N)`,
      i + 1,
    );
  }
  return { name, column, end: after };
}
