// The parsed form of a topic query, and its canonical FTS5 MATCH expression.
// The expression is built only from FTS5 strings we quote ourselves and operators we emit:
// no character the subscriber typed reaches FTS5 syntax except as a token inside "…".
import type { Column } from './lexer.ts';

/** A word or phrase: consecutive tokens (folded, unstemmed); `prefix` marks the last one as a prefix. */
export interface TermNode {
  kind: 'term';
  /** The columns searched, in COLUMN_ORDER. */
  columns: readonly Column[];
  tokens: string[];
  prefix: boolean;
}

/** All of `pos` and none of `neg`. `at` is the 1-based position of the group, for messages. */
export interface AndNode {
  kind: 'and';
  pos: QueryNode[];
  neg: QueryNode[];
  at: number;
}

export interface OrNode {
  kind: 'or';
  items: QueryNode[];
}

export type QueryNode = TermNode | AndNode | OrNode;

/** A positive word or phrase of a topic in title/abstract, for highlighting. Tokens are folded, unstemmed. */
export interface HighlightTerm {
  tokens: string[];
  prefix: boolean;
}

export const COLUMN_ORDER: readonly Column[] = ['title', 'abstract', 'authors', 'categories'];

/** What a bare word or phrase searches: title and abstract, not authors or categories. */
export const DEFAULT_COLUMNS: readonly Column[] = ['title', 'abstract'];

/** The canonical FTS5 expression: same query, whatever the spacing, case, accents or operand order. */
export function toFts(node: QueryNode): string {
  const columns = uniformColumns(node);
  if (columns !== null) {
    return node.kind === 'term' ? `{${columns}} : ${ftsString(node)}` : `{${columns}} : (${body(node, true)})`;
  }
  return body(node, false);
}

/** `"multi agent"` or `"diffus"*`; any `"` is doubled (tokens never hold one, but this is the one door). */
function ftsString(term: TermNode): string {
  return `"${term.tokens.join(' ').replaceAll('"', '""')}"${term.prefix ? '*' : ''}`;
}

/** The single column set all terms under `node` search, or null when they differ. */
function uniformColumns(node: QueryNode): string | null {
  const seen = new Set<string>();
  const visit = (n: QueryNode): void => {
    if (n.kind === 'term') seen.add(n.columns.join(' '));
    else if (n.kind === 'and') [...n.pos, ...n.neg].forEach(visit);
    else n.items.forEach(visit);
  };
  visit(node);
  return seen.size === 1 ? [...seen][0]! : null;
}

/** `node` without its outer column filter when `hoisted` (an enclosing filter covers it). */
function body(node: QueryNode, hoisted: boolean): string {
  if (node.kind === 'term') return hoisted ? ftsString(node) : toFts(node);
  if (node.kind === 'or') return operands(node.items, hoisted).join(' OR ');
  const pos = operands(node.pos, hoisted);
  if (node.neg.length === 0) return pos.join(' AND ');
  // FTS5's NOT is binary: (all positives) NOT (any negative).
  return `${wrapIfMany(pos, ' AND ')} NOT ${wrapIfMany(operands(node.neg, hoisted), ' OR ')}`;
}

/** Operands sorted and de-duplicated (AND and OR commute), composite ones parenthesised. */
function operands(nodes: QueryNode[], hoisted: boolean): string[] {
  const parts = nodes.map((n) => {
    if (n.kind === 'term') return hoisted ? ftsString(n) : toFts(n);
    return `(${hoisted ? body(n, true) : toFts(n)})`;
  });
  return [...new Set(parts)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function wrapIfMany(parts: string[], op: string): string {
  return parts.length === 1 ? parts[0]! : `(${parts.join(op)})`;
}

/** Positive title/abstract terms (not excluded, not author- or category-only), de-duplicated. */
export function highlightTerms(node: QueryNode): HighlightTerm[] {
  const out = new Map<string, HighlightTerm>();
  const visit = (n: QueryNode): void => {
    if (n.kind === 'term') {
      if (n.columns.includes('title') || n.columns.includes('abstract')) {
        out.set(`${n.tokens.join(' ')}${n.prefix ? '*' : ''}`, { tokens: n.tokens, prefix: n.prefix });
      }
    } else if (n.kind === 'and') n.pos.forEach(visit);
    else n.items.forEach(visit);
  };
  visit(node);
  return [...out.values()];
}
