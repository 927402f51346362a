// Parser for the topic query language (README, "Topic queries and how matching works"):
//   query    := sequence                      implicit AND between items
//   item     := alt ( 'OR' alt )*             OR binds tighter than AND
//   alt      := '-'? field? primary           `-` excludes (not allowed as an OR alternative)
//   field    := title: | abstract: | author: | category:
//   primary  := word | word* | "phrase" | "phrase"* | '(' sequence ')'
// A hyphenated word is a phrase (multi-agent = "multi agent"); AND typed in capitals is a no-op.
import type { Column, Token } from './lexer.ts';
import { lex } from './lexer.ts';
import { isAppError } from '../errors.ts';
import { inTopic, TOPIC_INVALID, topicError } from './errors.ts';
import { wordTokens } from './normalize.ts';
import {
  COLUMN_ORDER,
  DEFAULT_COLUMNS,
  highlightTerms,
  toFts,
  type AndNode,
  type HighlightTerm,
  type QueryNode,
  type TermNode,
} from './fts.ts';

export { TOPIC_INVALID } from './errors.ts';

export const MAX_TOPIC_LENGTH = 200;
export const MAX_TOPICS = 20;
/**
 * Levels of parentheses inside one another. FTS5's own parser has a fixed stack: about 16 levels of
 * alternating OR and AND groups overflow it ("parser stack overflow"), so deeper queries are refused here,
 * with their position, instead of failing in the matcher.
 */
export const MAX_GROUP_DEPTH = 8;

export interface ParsedTopic {
  /** Trimmed, as typed. */
  text: string;
  /**
   * The key of the `queries` table: the canonical FTS5 MATCH expression for a plain topic; with
   * `upvotes>=N` the expression followed by ` upvotes>=N`; for an example topic `like:<ids, sorted>`.
   */
  fts: string;
  /** The FTS5 expression to run (null for like: topics: their terms come from the database). */
  match: string | null;
  /** Papers need at least this many upvotes (0: no filter). */
  minUpvotes: number;
  /** like: topics: the example papers' normalised arXiv ids, sorted; null otherwise. */
  like: string[] | null;
  /** Positive title/abstract words and phrases, for highlighting. */
  terms: HighlightTerm[];
}

/** Parses one topic query; throws AppError TOPIC_INVALID (status 400) with a precise message. */
export function parseTopic(text: string): ParsedTopic {
  const trimmed = text.trim();
  if (trimmed === '') throw topicError('topic is empty');
  const length = Array.from(trimmed).length;
  if (length > MAX_TOPIC_LENGTH) {
    throw topicError(`topic is too long (${length} characters; at most ${MAX_TOPIC_LENGTH})`);
  }
  const { tokens, minUpvotes, like } = takeFilters(lex(text));
  const suffix = minUpvotes > 0 ? ` upvotes>=${minUpvotes}` : '';
  if (like !== null) {
    const extra = tokens[0];
    if (extra !== undefined) {
      throw topicError(
        `like: cannot be combined with words (position ${extra.pos}); put other words in a topic of their own`,
      );
    }
    const ids = [...like].sort();
    return { text: trimmed, fts: `like:${ids.join(',')}${suffix}`, match: null, minUpvotes, like: ids, terms: [] };
  }
  if (tokens.length === 0 && minUpvotes > 0) {
    throw topicError('upvotes>=N filters the papers of a topic: add at least one word to search for');
  }
  const root = new Parser(tokens).parseQuery();
  const match = toFts(root);
  return { text: trimmed, fts: match + suffix, match, minUpvotes, like: null, terms: highlightTerms(root) };
}

/**
 * Takes `upvotes>=N` and `like:` out of the token list. Both apply to the whole topic, so they must
 * stand on their own at the top level: not inside parentheses, not after `-` or a field prefix, not
 * a side of OR. Each may appear once.
 */
function takeFilters(all: Token[]): { tokens: Token[]; minUpvotes: number; like: string[] | null } {
  const tokens: Token[] = [];
  let minUpvotes = 0;
  let like: string[] | null = null;
  let depth = 0;
  let seenUpvotes = false;
  all.forEach((tok, i) => {
    if (tok.type === 'lparen') depth++;
    if (tok.type === 'rparen') depth--;
    if (tok.type !== 'upvotes' && tok.type !== 'like') {
      tokens.push(tok);
      return;
    }
    const name = tok.type === 'upvotes' ? 'upvotes>=' : 'like:';
    const before = all[i - 1];
    const after = all[i + 1];
    if (depth > 0) throw topicError(`${name} at position ${tok.pos} applies to the whole topic: move it out of the parentheses`, tok.pos);
    if (before?.type === 'neg') throw topicError(`${name} at position ${tok.pos} cannot be excluded with '-'`, tok.pos);
    if (before?.type === 'field') throw topicError(`${name} at position ${tok.pos} cannot follow '${before.name}:'`, tok.pos);
    if (before?.type === 'or' || after?.type === 'or') {
      throw topicError(`${name} at position ${tok.pos} cannot be one side of OR`, tok.pos);
    }
    if (tok.type === 'upvotes') {
      if (seenUpvotes) throw topicError(`upvotes>= appears twice (again at position ${tok.pos})`, tok.pos);
      seenUpvotes = true;
      minUpvotes = tok.min;
    } else {
      if (like !== null) throw topicError(`like: appears twice (again at position ${tok.pos}): list the ids with commas`, tok.pos);
      like = tok.ids;
    }
  });
  return { tokens, minUpvotes, like };
}

/**
 * Parses a subscriber's topics: blank entries are skipped, exact duplicates (same FTS5 expression)
 * keep their first occurrence, with its 0-based place in `texts`. Errors name the topic by its place.
 */
export function parseTopics(texts: string[]): Array<ParsedTopic & { index: number }> {
  const filled = texts.map((text, index) => ({ text, index })).filter((t) => t.text.trim() !== '');
  if (filled.length === 0) throw topicError('add at least one topic');
  if (filled.length > MAX_TOPICS) {
    throw topicError(`too many topics (${filled.length}; at most ${MAX_TOPICS})`);
  }
  const byFts = new Map<string, ParsedTopic & { index: number }>();
  for (const { text, index } of filled) {
    let parsed: ParsedTopic;
    try {
      parsed = parseTopic(text);
    } catch (e) {
      if (isAppError(e) && e.code === TOPIC_INVALID) throw inTopic(e, index);
      throw e;
    }
    if (!byFts.has(parsed.fts)) byFts.set(parsed.fts, { ...parsed, index });
  }
  return [...byFts.values()];
}

/** One item of a sequence: a node (null when it held no searchable word) and whether it is excluded. */
interface Item {
  node: QueryNode | null;
  negated: boolean;
  pos: number;
}

class Parser {
  private i = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parseQuery(): QueryNode {
    const items = this.sequence(DEFAULT_COLUMNS);
    const stray = this.tokens[this.i];
    if (stray !== undefined) {
      // sequence() only stops early at a ')' that no '(' opened.
      throw topicError(`unbalanced parenthesis at position ${stray.pos} (no '(' before this ')')`, stray.pos);
    }
    const root = buildAnd(items, 1);
    if (root === null) throw topicError('topic has no word to search for');
    if (root.kind === 'and' && root.pos.length === 0) {
      throw topicError('topic has only excluded terms: add at least one word to search for');
    }
    return root;
  }

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  /** Items up to the end or the next ')' (left for the caller). */
  private sequence(columns: readonly Column[]): Item[] {
    const items: Item[] = [];
    for (let tok = this.peek(); tok !== undefined && tok.type !== 'rparen'; tok = this.peek()) {
      items.push(this.orChain(columns));
    }
    return items;
  }

  private orChain(columns: readonly Column[]): Item {
    const start = this.peek()!;
    if (start.type === 'or') throw danglingOr(start.pos);
    const alts = [this.alternative(columns)];
    for (let tok = this.peek(); tok?.type === 'or'; tok = this.peek()) {
      this.i++;
      const next = this.peek();
      if (next === undefined || next.type === 'or' || next.type === 'rparen') throw danglingOr(tok.pos);
      alts.push(this.alternative(columns));
    }
    if (alts.length === 1) return alts[0]!;
    const nodes: QueryNode[] = [];
    for (const alt of alts) {
      if (alt.negated) {
        throw topicError(`excluded term at position ${alt.pos} cannot be one side of OR`, alt.pos);
      }
      if (alt.node === null) continue;
      requirePositive(alt.node);
      nodes.push(alt.node);
    }
    return { node: buildOr(nodes), negated: false, pos: start.pos };
  }

  private alternative(columns: readonly Column[]): Item {
    const tok = this.peek()!;
    if (tok.type !== 'neg') return { node: this.fielded(columns, null), negated: false, pos: tok.pos };
    this.i++;
    const node = this.fielded(columns, tok);
    if (node !== null) requirePositive(node);
    return { node, negated: true, pos: tok.pos };
  }

  /** An optional field prefix, then a primary. `after` is the '-' just read, if any. */
  private fielded(columns: readonly Column[], after: Token | null): QueryNode | null {
    const tok = this.peek();
    if (tok?.type === 'field') {
      this.i++;
      return this.primary([tok.column], tok);
    }
    return this.primary(columns, after);
  }

  private primary(columns: readonly Column[], after: Token | null): QueryNode | null {
    const tok = this.peek();
    if (
      tok === undefined ||
      tok.type === 'rparen' ||
      tok.type === 'or' ||
      tok.type === 'neg' ||
      tok.type === 'field' ||
      tok.type === 'upvotes' ||
      tok.type === 'like'
    ) {
      const what = after?.type === 'field' ? `'${after.name}:'` : `'-'`;
      const at = after?.pos ?? tok?.pos ?? 1;
      throw topicError(`expected a word, phrase or group after ${what} at position ${at}`, at);
    }
    this.i++;
    if (tok.type === 'word') {
      const tokens = wordTokens(tok.raw);
      return tokens.length === 0 ? null : term(columns, tokens, tok.prefix);
    }
    if (tok.type === 'phrase') {
      const tokens = wordTokens(tok.raw);
      if (tokens.length === 0) throw topicError(`empty phrase at position ${tok.pos}`, tok.pos);
      return term(columns, tokens, tok.prefix);
    }
    // '(' … ')'
    if (++this.depth > MAX_GROUP_DEPTH) {
      throw topicError(`groups nested too deeply at position ${tok.pos} (at most ${MAX_GROUP_DEPTH} levels of parentheses)`, tok.pos);
    }
    const items = this.sequence(columns);
    this.depth--;
    if (this.peek() === undefined) {
      throw topicError(`unbalanced parenthesis at position ${tok.pos} (this '(' is never closed)`, tok.pos);
    }
    this.i++;
    if (items.length === 0) throw topicError(`empty group at position ${tok.pos}`, tok.pos);
    return buildAnd(items, tok.pos);
  }
}

function danglingOr(pos: number): Error {
  return topicError(`dangling OR at position ${pos} (OR needs a term on each side)`, pos);
}

function term(columns: readonly Column[], tokens: string[], prefix: boolean): TermNode {
  const ordered = COLUMN_ORDER.filter((c) => columns.includes(c));
  return { kind: 'term', columns: ordered, tokens, prefix };
}

/** An OR alternative or an excluded group needs something to search for (FTS5's NOT is binary). */
function requirePositive(node: QueryNode): void {
  if (node.kind === 'and' && node.pos.length === 0) {
    throw topicError(`group at position ${node.at} has only excluded terms`, node.at);
  }
}

/** AND of items: nested ANDs are flattened (a (b -c) = a b -c), duplicates dropped. */
function buildAnd(items: Item[], at: number): QueryNode | null {
  const pos: QueryNode[] = [];
  const neg: QueryNode[] = [];
  for (const { node, negated } of items) {
    if (node === null) continue;
    if (negated) neg.push(node);
    else if (node.kind === 'and') {
      pos.push(...node.pos);
      neg.push(...node.neg);
    } else pos.push(node);
  }
  const and: AndNode = { kind: 'and', pos: unique(pos), neg: unique(neg), at };
  if (and.pos.length + and.neg.length === 0) return null;
  if (and.neg.length === 0 && and.pos.length === 1) return and.pos[0]!;
  return and;
}

/** OR of alternatives: nested ORs are flattened, duplicates dropped. */
function buildOr(nodes: QueryNode[]): QueryNode | null {
  const items = unique(nodes.flatMap((n) => (n.kind === 'or' ? n.items : [n])));
  if (items.length === 0) return null;
  return items.length === 1 ? items[0]! : { kind: 'or', items };
}

function unique(nodes: QueryNode[]): QueryNode[] {
  const byFts = new Map<string, QueryNode>();
  for (const n of nodes) if (!byFts.has(toFts(n))) byFts.set(toFts(n), n);
  return [...byFts.values()];
}
