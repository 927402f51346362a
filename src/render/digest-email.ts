// One subscriber's digest email, put together from bytes: the shell (their address, links, counts) and
// each card's reader part (number, matched topics, mute and feedback links) come from shapes filled once
// per run, with only the reader's values escaped and written between their encoded texts
// (digest-shell.ts, reader-shape.ts); each paper's card or compact line comes encoded from the run's card
// cache (card-cache.ts). Work per digest is then the reader's values plus copying bytes: the escaping,
// highlighting, template filling and encoding of a paper and of the templates happen once per run.
//
// Long digests: the first DIGEST_FULL_PAPERS papers (in display order, the planner's: README "When digests go out") are
// shown in full, the rest as compact lines (title, authors, why matched; no abstract), and a button
// links to the whole list on the web view. The HTML stays under the clipping cap by construction: every
// card's size is known before anything is joined (shared bytes from the cache + the reader's filled
// pieces), the shell is measured with its largest counts, and papers are taken in order while they fit
// (full cards first; when even those do not all fit, the rest become compact lines, and what does not
// fit as a line is left to the web view).
import { AppError } from '../errors.ts';
import { HtmlBodyWriter, htmlWireLength } from './encode/html-body.ts';
import { fixedRunHtml } from './encode/html-fixed-run.ts';
import { digestShell, type ShellShapes } from './digest-shell.ts';
import { EncodedEmail } from './encoded-email.ts';
import { QpBodyWriter, type ArenaPool, type QpSegment } from './encode/qp-body.ts';
import type { CardBytes, CardCache, EncodedBlock } from './card-cache.ts';
import { topicKeyOf } from './card-highlight.ts';
import { CLOSE_SEG, litSlots, OPEN_SEG, startLitMasks } from './lit-slots.ts';
import { authorsLine, digestSubject, distinctTopics, paperDaysLabel, plural, safeHref, tidy, topicsInOrder, trimOnWord } from './render-format.ts';
import type { BlockPieces, CompiledTemplates } from './render-templates.ts';
import { filledSize, plainSlots, shapedMaxBytes, slotValues, writeShapedHtml, writeShapedText, type ReaderShape, type ReaderShapes } from './reader-shape.ts';
import type { DigestPaperView, DigestView, RenderedEmail } from './digest-types.ts';
import { TopicRuns } from './topic-runs.ts';
import { topicLabel } from '../match/label.ts';
import { compactGroups, glanceLine, topPicks } from './digest-glance.ts';
import { feedbackView, matchedView, safeLinks, topicKey, type FeedbackView, type Matched } from './card-views.ts';

/** Room kept for the shell's counts, which are measured at their largest before the real ones are known. */
const SHELL_SLACK = 256;
/**
 * Compact lines looked at past the full cards: more never fit under the clipping size (a line is at
 * least ~400 bytes of HTML), so a 2,000-paper digest costs no more than a 300-paper one.
 */
const MAX_COMPACT_CANDIDATES = 300;
/** Compact lines prepared and filled per step (a broad digest shows ~15 past its full cards). */
const COMPACT_CHUNK = 16;

export interface DigestLayout {
  htmlByteLimit: number;
  fullPapers: number;
  /**
   * Compact lines at most after the full cards (render.ts DEFAULT_COMPACT_PAPERS); the rest are on the web
   * view. Before the cards' markup was made lean, the clipping size alone bounded them (a broad digest
   * showed ~15); at 100 KB it would now let ~65 through and the message would grow instead of shrink.
   */
  compactPapers: number;
  /** Scratch for the reader's encoded text, reused once the email is released (after sending). */
  arenas?: ArenaPool | undefined;
  /** The reader parts' shapes (reader-shape.ts); without them every part is filled by Handlebars. */
  shapes?: ReaderShapes | undefined;
  /** The shell's shapes (digest-shell.ts); without them the shell is filled per layout. */
  shellShapes?: ShellShapes | undefined;
}

interface Chosen {
  index: number;
  block: EncodedBlock;
  /** Which highlight slots this reader sees lit (1: lit). */
  lit: Uint8Array;
  /** The reader's pieces of this block. */
  reader: ReaderFill;
}

/**
 * A block's reader pieces for one reader, and their HTML size as sent: the shape's parts (one set per run)
 * with the reader's values, or, for a block without a shape, its HTML pieces filled by Handlebars. Decision:
 * one object per block, not one per part plus a closure for the text part (~10% of the bytes a diverse
 * digest allocated went to these fills). The text part's values are made when it is written.
 */
interface ReaderFill {
  /** The shape's parts; undefined when the block has none (then `filled`). */
  shape: ReaderShape | undefined;
  /** The HTML pieces filled by Handlebars (no shape), in piece order. */
  filled: string[] | undefined;
  /** The HTML values of the shape's slots (slotValues). */
  values: string[];
  /** Slots of `values` known to be printable ASCII with nothing to escape (reader-shape.ts plainSlots). */
  plain: number;
  size: number;
  /** Whose: the number, links and topic runs (topic-runs.ts: the digest's runs of the card's topic list). */
  view: ReaderView;
}

const NO_VALUES: string[] = [];

/** What a reader part of a card is filled with: their number, the shared parts, their topics and links. */
interface ReaderView {
  n: number;
  p: unknown;
  matched: Matched;
  /** The same list's values and runs, shared by the digest's cards that matched the same topics. */
  topics: TopicRuns;
  fb: FeedbackView | null;
}

/** A paper's matched topics as the email uses them (the same for every paper that matched the same topics). */
interface PaperTopics {
  /** Sorted topic keys: the card cache's and highlighter's input (topicKey). */
  keys: string[];
  /** The same as the card cache looks them up (topicKeyOf), made once per list instead of once per card. */
  cacheKeys: string[];
  /** The keys joined: which set of highlights a reader sees lit (litSlots). */
  litKey: string;
  /** The reader part's "Matched:" lines, escaped and with their mute links checked. */
  matched: Matched;
  /** Their values and encoded runs (topic-runs.ts). */
  topics: TopicRuns;
}

/** Papers an email with this layout looks at, at most: full cards, then the compact lines it may try. */
export function emailPaperLimit(layout: Pick<DigestLayout, 'fullPapers' | 'compactPapers'>): number {
  return layout.fullPapers + Math.min(MAX_COMPACT_CANDIDATES, layout.compactPapers);
}

// Hot path (once per digest; the render stage's largest share): one function on purpose, a named exception
// of tests/unit/function-budget.test.ts; split it only with an A/B run beside it (npm run bench:ab).
// Measured: BENCHMARKS.md § Why the code is shaped this way, the function budget's hot loops.
export function renderDigestEmail(t: CompiledTemplates, cache: CardCache, view: DigestView, layout: DigestLayout): RenderedEmail {
  startLitMasks();
  const total = view.paperCount ?? view.papers.length;
  if (total === 0) {
    throw new AppError('digest_empty', `digest for ${view.email} (${view.edition}) has no papers to render`);
  }
  const links = safeLinks(view.links);
  const subject = digestSubject(total, (view.topicTexts ? distinctTopics(view.topicTexts) : topicsInOrder(view.papers)).map(topicLabel), view.edition);
  const days = paperDaysLabel(view.paperDays);
  const shell = digestShell(t, {
    subject,
    preview: trimOnWord(tidy(view.papers[0]?.title ?? ''), 110),
    edition: tidy(view.edition),
    email: view.email,
    intro: `${introCount(total, view.suggestedInList)}${followedCount(view)}${days === '' ? '' : ` (${days})`}.`,
    glance: glanceLine(view, Math.min(3, view.suggestions?.length ?? 0)),
    picks: topPicks(view.papers, total, links.webView, view.maxPapers),
    links,
    // "You may also like" (at most three; they are few and differ per reader).
    suggestions: (view.suggestions ?? []).slice(0, 3).map((paper) => ({
      p: { url: safeHref(paper.url), title: tidy(paper.title), authors: authorsLine(paper.authors) },
      why: paper.because === undefined ? '' : trimOnWord(tidy(paper.because), 110),
      fb: feedbackView(paper),
    })),
    // "From authors you follow" (at most MAX_FOLLOWED; the rest are on the web view).
    followed: (view.followed ?? []).slice(0, MAX_FOLLOWED).map((paper) => ({
      p: { url: safeHref(paper.url), title: tidy(paper.title), authors: authorsLine(paper.authors) },
      why: followedNames(paper),
      fb: feedbackView(paper),
    })),
  }, total, layout.shellShapes);
  // Sizes are the HTML as sent (7bit: non-ASCII as references), which is what a client receives and clips.
  const shellBytes = (full: number, compact: number) => shell.size(full, compact);

  // Fast check against the largest shell (compact heading and button present, counts at their widest,
  // plus slack); only a card that fails it is checked against the exact shell (one more fill), so the
  // email fills up to the limit and no further while most digests fill the shell once.
  const budget = layout.htmlByteLimit - shellBytes(0, total) - SHELL_SLACK;
  let used = 0;
  const full: Chosen[] = [];
  const compact: Chosen[] = [];
  // The first DIGEST_FULL_PAPERS as full cards, the next ones as compact lines. The reader's own cap
  // (preference "most papers per email") bounds both; the rest are on the web view.
  const cap = view.maxPapers != null && view.maxPapers > 0 ? Math.min(total, Math.trunc(view.maxPapers)) : total;
  const fullCount = Math.min(cap, layout.fullPapers);
  const candidates = Math.min(cap, view.papers.length, emailPaperLimit({ fullPapers: fullCount, compactPapers: layout.compactPapers }));
  // A paper's card, reader view and signed links are made only when the paper is looked at: a broad digest
  // holds ~190 papers and shows ~40, and the rest cost nothing.
  // The assembly's own state, emptied before returning (see the end).
  let papers: ReadonlyArray<DigestPaperView> = view.papers;
  const cards: CardBytes[] = [];
  const views: ReaderView[] = [];
  /** Each prepared paper's list (byList's entry), so that take() does not look it up again. */
  const lists: PaperTopics[] = [];
  // What follows from a paper's matched topics alone, made once per list: the loader gives the papers that
  // matched the same topics one shared list (view.ts), so a broad digest's ~50 papers shown make ~3-7.
  const byList = new Map<DigestPaperView['matchedTopics'], PaperTopics>();
  const prepare = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      if (cards[i] !== undefined) continue;
      const paper = papers[i]!;
      let mine = byList.get(paper.matchedTopics);
      if (mine === undefined) {
        const keys = topicKey(paper);
        const matched = matchedView(paper);
        mine = { keys, cacheKeys: keys.map(topicKeyOf), litKey: keys.join('\u0000'), matched, topics: new TopicRuns(matched) };
        byList.set(paper.matchedTopics, mine);
      }
      const card = cache.card(paper, mine.cacheKeys, paper.runTopics);
      cards[i] = card;
      lists[i] = mine;
      views[i] = { n: i + 1, p: card.parts, matched: mine.matched, topics: mine.topics, fb: feedbackView(paper) };
    }
  };
  // The reader's pieces of a block: from its shape (values between texts filled once per run), or, for
  // templates and topics that have none, filled by Handlebars here.
  const fillReader = (i: number, kind: 'full' | 'compact'): ReaderFill => {
    const v = views[i]!;
    const shape = layout.shapes?.shape(kind, v.matched.length, v.fb === null ? 0 : v.fb.follow === null ? 1 : 2);
    if (!shape) {
      const filled = fillOne(kind === 'full' ? t.fullHtml : t.compactHtml, v);
      let size = 0;
      for (const s of filled) size += htmlWireLength(s);
      return { shape: undefined, filled, values: NO_VALUES, plain: 0, size, view: v };
    }
    const values = slotValues(v.n, v.fb, v.topics.html, true);
    const plain = plainSlots(v.fb);
    let size = 0;
    for (const part of shape.html) size += filledSize(part, values, plain, v.topics);
    return { shape, filled: undefined, values, plain, size, view: v };
  };
  // The compact lines go under their topic's heading: a heading's bytes count with the first line under it.
  const groups = compactGroups();
  const take = (i: number, kind: 'full' | 'compact', reader: ReaderFill): Chosen | undefined => {
    const card = cards[i]!;
    const block = kind === 'full' ? card.full : card.compact;
    const { lit, extra } = litSlots(card, lists[i]!.cacheKeys, lists[i]!.litKey);
    const heading = kind === 'compact' ? groups.headingSize(papers[i]!) : 0;
    const size = block.htmlBytes + reader.size + (kind === 'full' ? extra.full : extra.compact) + heading;
    if (used + size >= budget) {
      const [f, c] = kind === 'full' ? [full.length + 1, compact.length] : [full.length, compact.length + 1];
      if (used + size + shellBytes(f, c) >= layout.htmlByteLimit) return undefined;
    }
    used += size;
    if (kind === 'compact') groups.add(papers[i]!, compact.length);
    return { index: i, block, lit, reader };
  };
  prepare(0, fullCount);
  let i = 0;
  for (; i < fullCount; i++) {
    const c = take(i, 'full', fillReader(i, 'full'));
    if (c === undefined) break;
    full.push(c);
  }
  // Compact lines, a few at a time until one does not fit: where the email fills up is not known before.
  let stop = false;
  while (!stop && i < candidates) {
    const end = Math.min(candidates, i + COMPACT_CHUNK);
    prepare(i, end);
    for (; i < end; i++) {
      const c = take(i, 'compact', fillReader(i, 'compact'));
      if (c === undefined) {
        stop = true;
        break;
      }
      compact.push(c);
    }
  }
  const shown = full.length + compact.length;
  // Shown grouped: each topic's lines in the planner's order, the groups in the order of their best line.
  const grouped = groups.order(compact);

  const html = new HtmlBodyWriter(layout.arenas);
  shell.writeHtml(html, full.length, compact.length, 0);
  for (const c of full) addHtmlBlock(html, c.block, c.reader, c.lit);
  shell.writeHtml(html, full.length, compact.length, 1);
  for (const { chosen: c, heading } of grouped) {
    if (heading !== undefined) html.addText(heading.html);
    addHtmlBlock(html, c.block, c.reader, c.lit);
  }
  shell.writeHtml(html, full.length, compact.length, 2);
  if (html.size >= layout.htmlByteLimit) {
    // Cannot happen (sizes are summed before joining); kept so a template change that breaks the sum shows.
    throw new AppError('digest_too_big', `digest for ${view.email}: ${html.size} bytes of HTML, over ${layout.htmlByteLimit}`);
  }

  const text = new QpBodyWriter(layout.arenas);
  const textShell = shell.text(full.length, compact.length);
  text.addText(textShell[0]);
  for (const c of full) addTextBlock(text, c.block.text, c.reader, t.fullText);
  text.addText(textShell[1]);
  for (const { chosen: c, heading } of grouped) {
    if (heading !== undefined) text.addText(heading.text);
    addTextBlock(text, c.block.text, c.reader, t.compactText);
  }
  text.addText(textShell[2]);

  const body = html.encoded();
  const email = new EncodedEmail(subject, { html: body.parts, text: text.parts, htmlTransfer: body.transfer }, shown, full.length, html.size, [html, text]);
  // Emptied, so that whatever still holds this call's closures holds nothing of the digest: otherwise a
  // sending thread sometimes promoted ~30% of what it allocated to the old generation.
  // Measured: BENCHMARKS.md § Why the code is shaped this way, digest-email.ts.
  papers = [];
  cards.length = 0;
  views.length = 0;
  lists.length = 0;
  full.length = 0;
  compact.length = 0;
  grouped.length = 0;
  byList.clear();
  return email;
}

/** A view's reader parts filled by Handlebars (blocks without a shape: reader-shape.ts). */
function fillOne(pieces: BlockPieces, view: object): string[] {
  const out: string[] = [];
  for (const p of pieces) if (p.reader) out.push(p.fill(view));
  return out;
}


/**
 * A card or line of the HTML, with this reader's highlights and parts, copied into the writer's arena as
 * ONE Buffer part: a card is ~10-20 segments (its highlights cut it) and a Buffer view per segment was
 * ~400 small objects per friendly digest for the collector, and as many parts for the MIME builder to copy.
 */
function addHtmlBlock(w: HtmlBodyWriter, block: EncodedBlock, reader: ReaderFill, lit: Uint8Array): void {
  let need = block.htmlMaxBytes;
  const { filled, values } = reader;
  const parts = reader.shape?.html;
  if (parts !== undefined) for (const part of parts) need += shapedMaxBytes(part, values);
  else for (const s of filled!) need += 9 * s.length + 16;
  w.beginRun(need);
  let r = 0;
  const items = block.html;
  for (let k = 0; k < items.length; k++) {
    const item = items[k]!;
    if (item === null) {
      const part = parts?.[r];
      if (part !== undefined) writeShapedHtml(w, part, values, reader.plain, reader.view.topics);
      else w.addText(filled?.[r] ?? '');
      r++;
    } else if ('fixed' in item) {
      // Laid out once for any column; where its head does not fit this body's line, encoded as text here.
      if (!w.addFixed(item.fixed, lit)) w.addText(fixedRunHtml(item.fixed, lit));
    } else if ('slot' in item) {
      if (lit[item.slot]) w.addSegment(item.open ? OPEN_SEG : CLOSE_SEG);
    } else w.addSegment(item);
  }
  w.endRun();
}

/**
 * A card or line of the text part: its shared pieces by reference, the reader's written here (from the
 * block's shape, or filled by Handlebars from `unshaped` when it has none).
 */
function addTextBlock(w: QpBodyWriter, items: ReadonlyArray<QpSegment | null>, reader: ReaderFill, unshaped: BlockPieces): void {
  const v = reader.view;
  const parts = reader.shape?.text;
  const filled = parts === undefined ? fillOne(unshaped, v) : undefined;
  const values = parts === undefined ? NO_VALUES : slotValues(v.n, v.fb, v.topics.text, false);
  // One run: the card's shared segments copied beside the reader's part, so the text body's cards become a
  // few Buffer parts, not one view per reader part (the shared bytes are copied once more by the MIME build anyway).
  let need = 0;
  for (const item of items) if (item !== null) need += item.bytes.length;
  w.beginRun(need);
  let r = 0;
  for (const item of items) {
    if (item === null) {
      const part = parts?.[r];
      if (part !== undefined) writeShapedText(w, part, values, reader.plain, v.topics);
      else w.addText(filled?.[r] ?? '');
      r++;
    } else w.addSegment(item);
  }
  w.endRun();
}

/** Papers from followed authors an email lists at most (DigestView.followed). */
const MAX_FOLLOWED = 5;

/** ", and 2 from authors you follow" (DigestView.followed), or nothing. */
function followedCount(view: Pick<DigestView, 'followed'>): string {
  const n = view.followed?.length ?? 0;
  return n === 0 ? '' : `, and ${n} from ${n === 1 ? 'an author' : 'authors'} you follow`;
}

/** The followed authors a paper of DigestView.followed came by: `author:"Name"` topics, their names. */
export function followedNames(paper: Pick<DigestView['papers'][number], 'matchedTopics'>): string {
  return paper.matchedTopics.map((m) => tidy(m.text.replace(/^author:"(.*)"$/, '$1'))).join(', ');
}

/** "12 new papers matched your topics", or with suggestions ranked in the list "10 … and 2 suggested by your model". */
function introCount(total: number, suggested: number | undefined): string {
  if (suggested === undefined || suggested === 0) return `${plural(total, 'new paper', 'new papers')} matched your topics`;
  return `${plural(total - suggested, 'new paper', 'new papers')} matched your topics and ${suggested} suggested by your model`;
}
