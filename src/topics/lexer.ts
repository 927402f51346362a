// Splits a topic query into tokens: words, phrases, parentheses, `-`, `OR` and field prefixes.
// Positions are 1-based character positions in the string as given, for error messages.
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
  | { type: 'phrase'; pos: number; raw: string; prefix: boolean };

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
      `unknown field prefix '${m[1]}:' at position ${i + 1} (use title:, abstract:, author: or category:)`,
      i + 1,
    );
  }
  return { name, column, end: after };
}
