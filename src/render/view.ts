// Turns one ledger row (read by ledger/read.ts) into what the renderer needs (DigestView): the subscriber's
// address, the edition, the papers in the row's display order with the topics that matched each, and the links.
// Used by the sender (a DigestLoader per run, papers cached across rows) and by the web view page.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { paperFromRow, type PaperRow } from '../db/paper-row.ts';
import type { Links } from '../links.ts';
import { digestRowReader, ListReader, parseTopicIds, type DigestRecipient, type DigestRecord } from '../ledger/index.ts';
import type { DigestPaperView, DigestView, FeedbackLinks } from './render.ts';
import { safeHref } from './render-format.ts';
import { PaperDays } from './paper-days.ts';
import { LoadedPaper, type FeedbackSource, type PaperFields } from './loaded-paper.ts';
import { bestSuggestions, likeHighlightQuery, listTopicBits, recordOf, suggestedAs, textsOf, topicsByBit } from './view-row.ts';

export type { DigestRecipient, DigestRecord } from '../ledger/index.ts';

export interface LoadedDigest {
  row: DigestRecord;
  subscriber: DigestRecipient;
  view: DigestView;
}

/** One paper's display fields, and the day of the batch that first brought it (shown as metadata). */
const SQL_PAPER = `
  SELECT p.id, p.title, p.abstract, p.authors, p.url, p.published_at AS publishedAt, p.upvotes, p.categories,
         p.code_url AS codeUrl, b.date AS batchDay
  FROM papers p JOIN batches b ON b.id = p.first_batch_id WHERE p.id = ?`;

/**
 * Every query that matched a paper, as one subscriber's text of it: the run's topics for the paper, so
 * the renderer builds one card per paper with every reader's highlights (card-highlight.ts). Uses the
 * query_matches (paper_id) index of migration 006; once per paper per loader.
 */
const SQL_PAPER_TOPICS = `
  SELECT (SELECT t.text FROM topics t WHERE t.query_id = qm.query_id LIMIT 1) AS text, q.like_terms
  FROM query_matches qm JOIN queries q ON q.id = qm.query_id WHERE qm.paper_id = ?`;


/** SQL_PAPER's row. */
type PaperSql = PaperRow<'id' | 'title' | 'abstract' | 'authors' | 'url' | 'publishedAt' | 'upvotes' | 'categories' | 'codeUrl'> & {
  batchDay: string;
};

/** The loader's statements (prepared once per connection by statement()). */
function statements(db: Db) {
  return {
    row: digestRowReader(db),
    paper: statement(db, SQL_PAPER),
    paperTopics: statement(db, SQL_PAPER_TOPICS),
  };
}

interface CachedPaper {
  fields: PaperFields;
  /** The day of the batch that first brought it, as its id in the loader's day index (PaperDays.intern). */
  day: number;
}

export interface DigestLoaderOptions {
  /**
   * Papers kept in memory between rows (0 = none). A send run shows the same few thousand papers to
   * everyone, so reading each once instead of once per digest saves most of the loading work. A paper
   * edited while the run is going shows as it was when the run first read it.
   */
  paperCache?: number;
}

export interface LoadOptions {
  /**
   * Make at most this many papers (the first, in display order: what an email can show, Renderer.emailPapers);
   * the rest are counted (DigestView.paperCount) and their topics named (topicTexts) but not made. Without it
   * (the web view) every paper is. Decision: a broad digest holds ~190 papers and its email shows 50; making
   * a view with its signed links and topics for each cost the loader ~1.5 µs a paper (broad load 0.40 ms
   * against 0.13 friendly), so the work per email grew with what it held, not what it showed.
   */
  papers?: number;
}

/** Papers a send run keeps by default: about 1-2 KB each, so a few MB at most. */
export const DEFAULT_PAPER_CACHE = 5_000;

/**
 * Loads ledger rows with their subscriber and papers. Make one per send run (or per worker); the
 * paper cache lives as long as the loader.
 */
export class DigestLoader {
  private readonly row;
  private readonly paper;
  private readonly paperTopics;
  private readonly papers = new Map<number, CachedPaper>();
  /** The day of every paper read (the cache's and those it let go): papers past an email's are only counted. */
  private readonly days = new PaperDays();
  private readonly cacheSize: number;
  /** Query lists a reference row merges (ledger/lists.ts), kept decoded for the run. */
  private readonly lists: ListReader;

  constructor(
    db: Db,
    private readonly links: Links,
    opts: DigestLoaderOptions = {},
  ) {
    const st = statements(db);
    this.row = st.row;
    this.paper = st.paper;
    this.paperTopics = st.paperTopics;
    this.cacheSize = opts.paperCache ?? DEFAULT_PAPER_CACHE;
    this.lists = new ListReader(db);
    // Our links are PUBLIC_URL + path segments of token characters (digits, letters, '.', '-', '_') and
    // ids: canonical (safeHref leaves them as they are) exactly when a path under PUBLIC_URL is.
    // (And hold nothing HTML escapes, which a canonical URL's query may: such a PUBLIC_URL is checked per link.)
    const probe = `${links.base}/feedback/1.v1.abc_-/1/more`;
    this.canonicalLinks = safeHref(probe) === probe && !/[&<>"'`=]/.test(probe);
  }

  /** Whether the feedback links this loader makes need no checking by the renderer (FeedbackLinks.canonical). */
  private readonly canonicalLinks: boolean;

  /** The feedback and follow links of one digest's papers, all carrying the digest's token. */
  private feedbackSource(token: string): FeedbackSource {
    const digestLinks = this.links.digestLinks(token);
    const canonical = this.canonicalLinks;
    return {
      feedback: (paperId: number, authors: string[]): FeedbackLinks => ({
        more: digestLinks.more(paperId),
        less: digestLinks.less(paperId),
        follow: authors[0] === undefined ? undefined : { url: digestLinks.followFirst(paperId), name: authors[0] },
        canonical,
      }),
    };
  }

  /** "You may also like": the suggested papers still held, with their reasons. */
  private suggestionViews(best: Array<[number, string | null]>, feedback: FeedbackSource): DigestPaperView[] {
    const views: DigestPaperView[] = [];
    for (const [paperId, because] of best) {
      const paper = this.paperFields(paperId);
      if (!paper) continue;
      const view: DigestPaperView = new LoadedPaper(paper.fields, [], paperId, feedback);
      if (because) view.because = because;
      views.push(view);
    }
    return views;
  }

  /** "From authors you follow": the papers only a followed author brought, in the row's order. */
  private followedViews(rows: Array<[number, number]>, matchedOf: (mask: number) => DigestPaperView['matchedTopics'], feedback: FeedbackSource): DigestPaperView[] {
    const views: DigestPaperView[] = [];
    for (const [paperId, mask] of rows) {
      const paper = this.paperFields(paperId);
      if (paper) views.push(new LoadedPaper(paper.fields, matchedOf(mask), paperId, feedback));
    }
    return views;
  }

  /** The ledger row, its subscriber and the renderer's input; undefined when there is no such row. */
  // Measured hot path (once per digest; its row statement ~7% of a broad digest): one method on purpose;
  // split it only with an A/B run beside it (npm run bench:ab, BENCHMARKS.md).
  load(digestId: number, opts: LoadOptions = {}): LoadedDigest | undefined {
    const r = this.row(digestId);
    if (!r) return undefined;
    const rowTopics = parseTopicIds(r.topic_ids);
    const subscriber: DigestRecipient = { id: r.subscriber_id, email: r.email, status: r.subscriber_status, tokenSalt: r.token_salt };
    const bits = rowTopics.length;
    const { bitText, bitHighlight } = topicsByBit(r.topics, rowTopics);
    // The digest's own token, signed once: every feedback and follow link of this
    // digest (its papers and suggestions) carry it, so a digest costs one HMAC however many papers it
    // shows (one per paper shown was ~5% of a sending thread). The feedback service checks the paper.
    const token = this.links.digestToken(subscriber, r.id);
    // The subscriber's manage token, signed once too: the footer's links and every mute link carry it.
    const manageToken = this.links.manageToken(subscriber);
    const manageLinks = this.links.manageOf(manageToken);
    const feedback = this.feedbackSource(token);
    // A paper's matched topics, one list per topic mask: a row has a few distinct masks (2^topics at most)
    // and ~50 papers shown, and the renderer works per list (digest-email.ts reads it by identity), so the
    // papers that matched the same topics share one (read-only) list and its topic objects. One signed mute
    // link per topic, however many papers it matched.
    const matchedLists = new Map<number, DigestPaperView['matchedTopics']>();
    const topicViews = new Array<DigestPaperView['matchedTopics'][number] | undefined>(bits).fill(undefined);
    const matchedOf = (mask: number): DigestPaperView['matchedTopics'] => {
      const known = matchedLists.get(mask);
      if (known !== undefined) return known;
      const list: Array<DigestPaperView['matchedTopics'][number]> = [];
      for (let bit = 0; bit < bits; bit++) {
        const text = bitText[bit];
        if (!(mask & (1 << bit)) || text === undefined) continue; // a topic deleted since planning is not named
        let topic = topicViews[bit];
        if (topic === undefined) {
          topic = { text, muteUrl: this.links.muteOf(manageToken, rowTopics[bit]!), highlight: bitHighlight[bit] };
          topicViews[bit] = topic;
        }
        list.push(topic);
      }
      matchedLists.set(mask, list);
      return list;
    };

    const papers: DigestPaperView[] = [];
    // The first and last batch day of the papers counted, as day ids (PaperDays.intern; 0: none yet).
    let firstDay = 0;
    let lastDay = 0;
    let count = 0;
    // Past `limit`, a paper is only counted, its days and topics noted (see LoadOptions.papers).
    const limit = opts.papers ?? Infinity;
    // The row's topic bits whose topic still exists (a topic deleted since planning is not named), and
    // those any counted paper matched: a mask per row, not a lookup per paper and bit (~190 papers × 3
    // bits in a broad digest).
    let knownBits = 0;
    for (let bit = 0; bit < bits; bit++) if (bitText[bit] !== undefined) knownBits |= 1 << bit;
    let seen = 0;
    // Papers no topic but a followed author's matched go apart, "from authors you follow" (listTopicBits).
    const listBits = listTopicBits(bitText, knownBits);
    const followedRows: Array<[number, number]> = [];
    // The papers of the list that are suggestions, and the reasons of the row's suggestions (read when one is met).
    let inline: Set<number> | undefined;
    let reasonsRead: Map<number, string | null> | undefined;
    const reasons = () => (reasonsRead ??= new Map(bestSuggestions(r.suggestions)));
    // Papers per topic bit, for the email's at-a-glance counts (a few bits a paper).
    const perBit = new Array<number>(rowTopics.length).fill(0);
    // The list is walked in place (ListReader.walk): nothing is made for the papers past `limit` but their
    // day and topics, and only the papers still to be made need the display order (what fn returns).
    if (r.items !== null) {
      this.lists.walk(r.items, r.from_paper, r.to_paper, rowTopics.length, limit, (paperId, mask) => {
        // Past the email's papers, one read of the day index (paper-days.ts) when it knows the paper.
        // (A paper deleted while the run goes on is still counted there, as a cached one is still shown.)
        const indexed = papers.length >= limit ? this.days.get(paperId) : 0;
        const paper = indexed === 0 ? this.paperFields(paperId) : undefined;
        if (indexed === 0 && !paper) return papers.length < limit; // a paper deleted since planning is left out
        if (listBits !== 0 && mask !== 0 && (mask & listBits) === 0) return followedRows.push([paperId, mask]) > 0;
        const day = paper ? paper.day : indexed;
        if (day !== firstDay && day !== lastDay) {
          // Another day than the first's and the last's so far (rare): its text compared with theirs.
          const text = this.days.text(day);
          if (firstDay === 0 || text < this.days.text(firstDay)) firstDay = day;
          if (lastDay === 0 || text > this.days.text(lastDay)) lastDay = day;
        }
        count++;
        seen |= mask & knownBits;
        for (let m = mask & knownBits, bit = 0; m !== 0; m >>>= 1, bit++) if (m & 1) perBit[bit]!++;
        // No topic bit: a suggestion the reader's model ranked inside the list (feedback/model-pass.ts).
        if (mask === 0) (inline ??= new Set()).add(paperId);
        if (!paper || papers.length >= limit) return false;
        const { fields } = paper;
        const matched = mask === 0 ? suggestedAs(reasons().get(paperId) ?? null, manageLinks.preferences) : matchedOf(mask);
        papers.push(new LoadedPaper(fields, matched, paperId, feedback));
        return papers.length < limit;
      });
    }
    const suggestions = r.items === null ? [] : this.suggestionViews(bestSuggestions(r.suggestions, inline), feedback);
    // A day only followed authors brought papers: they are the list (an email is never empty).
    const followed = this.followedViews(followedRows, matchedOf, feedback);
    if (count === 0) count = (papers.push(...followed.slice(0, limit)), followed.splice(0).length);

    const view: DigestView = {
      email: r.email,
      edition: r.edition,
      papers,
      // The subject names the topics of the list's papers; a suggestion's reason is not a topic.
      ...(papers.length < count || inline !== undefined ? { paperCount: count, topicTexts: textsOf(seen, bitText) } : {}),
      topicCounts: perBit.flatMap((n, bit) => (n > 0 ? [{ text: bitText[bit]!, count: n }] : [])),
      paperDays: firstDay !== 0 ? { first: this.days.text(firstDay), last: this.days.text(lastDay) } : undefined,
      expired: r.items === null,
      maxPapers: r.max_papers,
      suggestions,
      ...(followed.length > 0 ? { followed } : {}),
      ...(inline !== undefined ? { suggestedInList: inline.size } : {}),
      links: {
        ...manageLinks,
        webView: this.links.webView(subscriber, r.id),
        home: this.links.home(),
      },
    };
    const row = recordOf(r);
    return { row, subscriber, view };
  }

  private paperFields(id: number): CachedPaper | undefined {
    const cached = this.papers.get(id);
    if (cached) return cached;
    const p = this.paper.get(id) as PaperSql | undefined;
    if (!p) return undefined;
    const { id: _id, batchDay, ...stored } = p;
    const read = paperFromRow(stored);
    // Copied into a literal of one shape: every digest that shows the paper reads these fields (LoadedPaper,
    // the card cache). Spread from paperFromRow's object as before, the papers of 20 broad digests had 341
    // hidden classes among 1,000 objects (%HaveSameMap), so those reads were megamorphic property loads:
    // 2.6% of a sending thread's samples (perf record, 20k broad `digest run`), none since.
    const fields: PaperFields = {
      title: read.title,
      url: read.url,
      authors: read.authors,
      abstract: read.abstract,
      upvotes: read.upvotes,
      categories: read.categories,
      publishedAt: read.publishedAt,
      codeUrl: read.codeUrl,
      // A like: topic is highlighted by its terms, as in the reader's own matched topics.
      runTopics: (this.paperTopics.all(id) as Array<{ text: string | null; like_terms: string | null }>)
        .map((t) => (t.like_terms !== null ? likeHighlightQuery(t.like_terms) : t.text))
        .filter((t): t is string => t !== null && t !== ''),
    };
    const paper: CachedPaper = { day: this.days.intern(batchDay), fields };
    if (this.cacheSize > 0) {
      // Bounded: past the limit the oldest entry goes (Map keeps insertion order).
      if (this.papers.size >= this.cacheSize) this.papers.delete(this.papers.keys().next().value!);
      this.papers.set(id, paper);
      this.days.set(id, paper.day);
    }
    return paper;
  }
}

/** The ledger row, its subscriber and the renderer's input; undefined when there is no such row. */
export function loadDigest(db: Db, digestId: number, links: Links): LoadedDigest | undefined {
  return new DigestLoader(db, links, { paperCache: 0 }).load(digestId);
}

/** The renderer's input for one ledger row (web view page, preview). */
export function loadDigestView(db: Db, digestId: number, links: Links): DigestView | undefined {
  return loadDigest(db, digestId, links)?.view;
}
