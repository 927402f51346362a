// Topics for tests/integration/match-in-memory.test.ts and bench/match-in-memory.ts: the matcher tests'
// acceptance topics, the README's examples, and a seeded generator of diverse topics over a listing's words.

/** Topics of tests/integration/matcher*.test.ts (as typed there) and the README's table of the language. */
export const LISTED_TOPICS: readonly string[] = [
  '  games   "self play" ',
  '"human feedback"',
  '"multi agent"',
  '(chess OR poker) language',
  'NEAR(reinforcement learning)',
  'POKÉMON',
  'Self-Play games',
  'abstract:chessqa',
  'abstract:language',
  'author:"Yann LeCun"',
  'author:LeCun',
  'category:cs.CL',
  'category:cs.LG',
  'category:cs.LG self-play',
  'chess',
  'chess OR poker',
  'cs',
  'curriculum',
  'games',
  'hopper',
  'human feedback',
  'language',
  'lecun',
  'multi agent',
  'multi-agent',
  'navigated',
  'negotiated',
  'pok*',
  'pokemon',
  'poker',
  'reinforcement',
  'reinforcement -(survey OR chess)',
  'reinforcement -survey',
  'reinforcement AND learning',
  'reinforcement learning',
  'self-play',
  'survey',
  'title:(chess OR games)',
  'title:(chess OR games) -abstract:language',
  'title:games',
  'title:poker',
  // matcher.test.ts: FTS5 syntax must never get through (each matches as words or is rejected)
  'a "b" * : ^ NEAR AND NOT',
  'NEAR(reinforcement learning, 2)',
  'x^2 : {title} "o\'neil"',
  'A* Search',
  '"chess" OR "poker"*',
  'title:"a""b"',
  'NOT chess',
  'chess:poker',
  // README, "Topic queries and how matching works"
  '"mixture of experts"',
  'diffusion OR flow',
  'token*',
  'title:(diffusion OR flow)',
  '"world model" upvotes>=10',
  'learning -survey',
  '(diffusion OR flow) AND "world model"',
];

/** mulberry32: a small seeded generator, so a failing topic can be found again. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIELDS = ['title:', 'abstract:', 'author:', 'category:'];
const CATEGORIES = ['cs.LG', 'cs.CL', 'cs.AI', 'cs.CV', 'stat.ML'];
const AUTHORS = ['Hopper', '"Grace Hopper"', 'LeCun', '"Yann LeCun"', 'Lovelace', 'Dauphin'];

/**
 * `n` distinct topics from the texts' words: words common and rare, phrases taken from the texts,
 * prefixes, hyphenated words, fields, OR groups, exclusions, upvotes>=N, odd case and accents.
 * commonShare: the share of words drawn from running text (frequent words) rather than the vocabulary.
 */
export function generatedTopics(texts: readonly string[], n: number, seed: number, commonShare = 0.5): string[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const sentences = texts.map((s) => s.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3));
  const vocab = [...new Set(sentences.flat().map((w) => w.toLowerCase()))];
  const word = (): string => {
    // A word drawn from running text is often a common one ("the", "model"); one from the vocabulary, rare.
    const w = rnd() >= commonShare ? pick(vocab) : pick(pick(sentences)).toLowerCase();
    const r = rnd();
    if (r < 0.05) return w.toUpperCase();
    if (r < 0.08) return w.replace('e', 'é');
    return w;
  };
  const phrase = (): string => {
    const s = pick(sentences);
    const at = Math.floor(rnd() * Math.max(1, s.length - 3));
    return `"${s.slice(at, at + 2 + Math.floor(rnd() * 2)).join(' ')}"`;
  };
  const operand = (): string => {
    const r = rnd();
    if (r < 0.45) return word();
    if (r < 0.65) return phrase();
    if (r < 0.75) return `${word().slice(0, 3 + Math.floor(rnd() * 3))}*`;
    if (r < 0.8) return `${word()}-${word()}`;
    if (r < 0.85) return `author:${pick(AUTHORS)}`;
    if (r < 0.9) return `category:${pick(CATEGORIES)}`;
    return `${pick(FIELDS.slice(0, 2))}${rnd() < 0.5 ? word() : `(${word()} OR ${word()})`}`;
  };
  const item = (): string => (rnd() < 0.25 ? `(${operand()} OR ${operand()}${rnd() < 0.3 ? ` OR ${operand()}` : ''})` : operand());
  const out = new Set<string>();
  while (out.size < n) {
    const parts = Array.from({ length: 1 + Math.floor(rnd() * 3) }, item);
    if (rnd() < 0.2) parts.push(`-${rnd() < 0.7 ? word() : `(${word()} OR ${word()})`}`);
    if (rnd() < 0.1) parts.push(`upvotes>=${pick([1, 3, 5, 10, 20])}`);
    const topic = parts.join(' ');
    if (topic.length <= 200) out.add(topic);
  }
  return [...out];
}
