// A topic as a reader names it: the words they searched for, without the query syntax (quotes, OR,
// field prefixes, excluded terms, filters). `"test-time compute" OR "test-time scaling"` reads
// "test-time compute or test-time scaling"; `author:"Yann LeCun"` reads "Yann LeCun". Cards, group
// headings, the at-a-glance counts and the subject show this; the topic itself is never changed.
import { lex, type Token } from './lexer.ts';

/** Labels made per text, remembered: the renderer asks for every topic list of every digest. */
const known = new Map<string, string>();
const KNOWN_MAX = 10_000;

/** The reader's name for a topic; the text itself, tidied, when it does not lex (it was saved before a rule). */
export function topicLabel(text: string): string {
  let label = known.get(text);
  if (label === undefined) {
    label = makeLabel(text);
    if (known.size >= KNOWN_MAX) known.clear();
    known.set(text, label);
  }
  return label;
}

function makeLabel(text: string): string {
  const tidy = text.replace(/\s+/g, ' ').trim();
  let tokens: Token[];
  try {
    tokens = lex(tidy);
  } catch {
    return tidy;
  }
  const parts: string[] = [];
  let skipDepth = -1; // inside an excluded group: its depth, until it closes
  let depth = 0;
  let skipNext = false;
  for (const tok of tokens) {
    if (tok.type === 'lparen') {
      depth++;
      if (skipNext && skipDepth < 0) skipDepth = depth;
      skipNext = false;
      continue;
    }
    if (tok.type === 'rparen') {
      if (depth === skipDepth) skipDepth = -1;
      depth--;
      continue;
    }
    if (skipDepth >= 0) continue;
    if (tok.type === 'neg') {
      skipNext = true;
      continue;
    }
    if (tok.type === 'field') continue; // the field's term follows; the neg flag stays for it
    if (tok.type === 'or') {
      if (parts.length > 0 && parts[parts.length - 1] !== 'or') parts.push('or');
      continue;
    }
    if (tok.type === 'upvotes') continue;
    if (tok.type === 'like') {
      parts.push(`papers like ${tok.ids.join(', ')}`);
      continue;
    }
    if (skipNext) {
      skipNext = false;
      if (parts[parts.length - 1] === 'or') parts.pop();
      continue;
    }
    parts.push(tok.raw.trim() + (tok.prefix ? '…' : ''));
  }
  while (parts[parts.length - 1] === 'or') parts.pop();
  while (parts[0] === 'or') parts.shift();
  const label = parts.filter((p) => p !== '').join(' ').replace(/\s+/g, ' ').trim();
  return label === '' ? tidy : label;
}
