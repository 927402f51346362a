// Word normalisation that mirrors the FTS5 tokenizer of papers_fts
// (`porter unicode61 remove_diacritics 2`), so the parser's canonical FTS5 strings and the
// highlighter see words exactly as SQLite does.
import { stemmer } from 'stemmer';

/**
 * One unicode61 token: letters, numbers and private-use characters; combining marks are kept
 * inside the word (they are removed afterwards, as remove_diacritics does). Everything else
 * (spaces, punctuation, `-`, `*`, `:`, `"`, `^`) separates tokens.
 */
const TOKEN_SOURCE = '[\\p{L}\\p{N}\\p{Co}\\p{M}]+';

/** A fresh global regex for scanning a text token by token (global regexes carry lastIndex state). */
export function tokenRegex(): RegExp {
  return new RegExp(TOKEN_SOURCE, 'gu');
}

const MARKS = /\p{M}/gu;

/** Lower case without diacritics ("Pokémon" -> "pokemon"); "" when the word was only marks. */
export function foldToken(word: string): string {
  const lower = word.toLowerCase();
  return ASCII.test(lower) ? lower : lower.normalize('NFD').replace(MARKS, '');
}

const ASCII = /^[\x00-\x7f]*$/;

/** The tokens FTS5 would see in a piece of user text, folded but not stemmed. */
export function wordTokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(tokenRegex())) {
    const t = foldToken(m[0]);
    if (t !== '') out.push(t);
  }
  return out;
}

/** SQLite's porter tokenizer passes tokens longer than 64 bytes through unstemmed. */
const PORTER_MAX_TOKEN_BYTES = 64;

/**
 * The stem FTS5 stores for a folded token. The `stemmer` package implements the same Porter
 * algorithm as SQLite (tests/integration/matcher.test.ts checks it against fts5vocab on every word
 * of the sample listing). SQLite applies the rules to UTF-8 bytes, so a word that keeps a non-Latin
 * or unfoldable letter next to an English suffix can differ ("Straße": SQLite "straß", here "straße");
 * only highlighting would miss such a word, never matching.
 */
export function stemToken(folded: string): string {
  if (Buffer.byteLength(folded, 'utf8') > PORTER_MAX_TOKEN_BYTES) return folded;
  return stemmer(folded);
}
