// The renderer: digest email (HTML + text), confirmation email and the digest's web page.
// MJML runs once per template in createRenderer; per subscriber only precompiled Handlebars fills
// run, over card parts cached per (paper, matched topics). The digest HTML is kept under Gmail's
// clipping size by adding cards only while they fit, then linking to the web page for the rest.
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { digestSubject, paperDaysLabel, plural, safeHref, tidy, topicsInOrder, trimOnWord } from './render-format.ts';
import { PaperPartsCache, type PaperInput, type PaperParts } from './render-parts.ts';
import { compileTemplates, compileTemplateSources, type CompiledTemplates, type TemplateSources } from './render-templates.ts';

export interface DigestPaperView extends PaperInput {
  /** The subscriber's topics that matched, in order. `highlight`: the query whose words to mark (like: topics). */
  matchedTopics: Array<{ text: string; muteUrl: string; highlight?: string | undefined }>;
  /** Signed per subscriber and paper (issue 13): "more/less like this", follow the first author. */
  feedback?: FeedbackLinks | undefined;
}

export interface FeedbackLinks {
  more: string;
  less: string;
  follow?: { url: string; name: string } | undefined;
}

export interface DigestView {
  email: string;
  /** YYYY-MM-DD */
  edition: string;
  /** Already in display order (the planner sorts). */
  papers: DigestPaperView[];
  /** First and last batch day of the papers (metadata: "papers of 24–25 Nov"); never decides anything. */
  paperDays?: { first: string; last: string } | undefined;
  /** The paper list was pruned (DIGEST_RETENTION_DAYS): the web view says so instead of listing. */
  expired?: boolean | undefined;
  links: { preferences: string; unsubscribe: string; webView: string; home: string };
  /** The reader's own cap (preference "most papers per email"): the rest are behind the web link. */
  maxPapers?: number | null | undefined;
  /** "You may also like": at most three papers no topic matched that the reader's profile ranks high. */
  suggestions?: DigestPaperView[] | undefined;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
  /** How many papers the email lists (the rest are behind the "more papers" link). */
  shownPapers: number;
}

export interface ConfirmView {
  email: string;
  confirmUrl: string;
  topics: string[];
  alreadySubscribed: boolean;
  manageUrl?: string;
}

export interface Renderer {
  /** Synchronous fill of precompiled templates. */
  digest(view: DigestView): RenderedEmail;
  confirm(view: ConfirmView): RenderedEmail;
  /** Full HTML page listing ALL papers (no cap), no external assets. */
  webView(view: DigestView): string;
}

export interface RendererOptions {
  templatesDir?: string;
  logger?: Logger;
  /** Largest digest HTML in UTF-8 bytes (exclusive). Gmail clips at about 102 KB. */
  htmlByteLimit?: number;
  /** Templates already through MJML (readTemplateSources): no MJML runs or loads (send worker threads). */
  sources?: TemplateSources;
}

/** Digest HTML must stay below this many UTF-8 bytes, or Gmail clips it (footer links included). */
export const HTML_BYTE_LIMIT = 100_000;

/** Stands in for the cards while the shell is measured; cannot occur in escaped output. */
const CARDS_MARK = '\u0000cards\u0000';

type Links = DigestView['links'];

interface CardView {
  n: number;
  p: PaperParts;
  matched: Array<{ text: string; muteUrl: string }>;
  fb: { more: string; less: string; follow: string | null; followName: string } | null;
}

export async function createRenderer(opts: RendererOptions = {}): Promise<Renderer> {
  const templates = opts.sources ? compileTemplateSources(opts.sources) : await compileTemplates(opts.templatesDir);
  const renderer = makeRenderer(templates, new PaperPartsCache(opts.logger), opts.htmlByteLimit ?? HTML_BYTE_LIMIT);
  warmUp(renderer);
  return renderer;
}

/** "12 new papers matched your topics (papers of 24–25 Nov)." */
function withDays(sentence: string, view: DigestView): string {
  const days = paperDaysLabel(view.paperDays);
  return days === '' ? `${sentence}.` : `${sentence} (${days}).`;
}

function makeRenderer(t: CompiledTemplates, cache: PaperPartsCache, htmlByteLimit: number): Renderer {
  const digest = (view: DigestView): RenderedEmail => {
    const total = view.papers.length;
    if (total === 0) {
      throw new AppError('digest_empty', `digest for ${view.email} (${view.edition}) has no papers to render`);
    }
    const links = safeLinks(view.links);
    const subject = digestSubject(total, topicsInOrder(view.papers), view.edition);
    const base = {
      subject,
      preview: trimOnWord(tidy(view.papers[0]?.title ?? ''), 110),
      edition: tidy(view.edition),
      email: view.email,
      intro: withDays(`${plural(total, 'new paper', 'new papers')} matched your topics`, view),
      links,
    };
    const suggestions = (view.suggestions ?? []).slice(0, 3).map((paper, i) => cardView(paper, i, cache));
    const shellView = (cards: string, more: number) => ({
      ...base,
      suggestions,
      cards,
      more,
      moreLabel: more > 0 ? `${plural(more, 'more paper', 'more papers')} in this digest` : '',
    });

    // The shell without the "more" button, cut where the cards go: all-fit emails reuse it as is.
    const [head = '', tail = ''] = t.digestShellHtml(shellView(CARDS_MARK, 0)).split(CARDS_MARK);
    const fullShellBytes = byteLength(head) + byteLength(tail);
    let moreShellBytes = -1; // the shell with the "N more papers" button, measured only when needed

    const cardViews: CardView[] = [];
    const htmlCards: string[] = [];
    let cardBytes = 0;
    let fitWithMore = total;
    // The reader's own cap: at most this many cards, the rest behind the "more papers" button.
    const cap = view.maxPapers != null && view.maxPapers > 0 ? Math.min(total, Math.trunc(view.maxPapers)) : total;
    for (let i = 0; i < cap; i++) {
      const card = cardView(view.papers[i] as DigestPaperView, i, cache);
      const html = t.digestCardHtml(card);
      const bytes = byteLength(html);
      if (fullShellBytes + cardBytes + bytes >= htmlByteLimit) {
        // Not everything fits: show the papers that fit beside the "more" button.
        if (moreShellBytes < 0) moreShellBytes = byteLength(t.digestShellHtml(shellView('', total)));
        fitWithMore = countFitting(htmlCards, moreShellBytes, htmlByteLimit);
        break;
      }
      cardViews.push(card);
      htmlCards.push(html);
      cardBytes += bytes;
    }

    if (cap < total && fitWithMore === total) {
      moreShellBytes = byteLength(t.digestShellHtml(shellView('', total)));
      fitWithMore = countFitting(htmlCards, moreShellBytes, htmlByteLimit);
    }
    const shown = fitWithMore;
    const more = total - shown;
    const shownHtml = htmlCards.slice(0, shown).join('');
    const html = more === 0 ? head + shownHtml + tail : t.digestShellHtml(shellView(shownHtml, more));
    let textCards = '';
    for (let i = 0; i < shown; i++) textCards += t.digestCardText(cardViews[i] as CardView);
    const text = t.digestShellText(shellView(textCards, more));
    return { subject, html, text, shownPapers: shown };
  };

  const webView = (view: DigestView): string => {
    const page = (paper: DigestPaperView, i: number) => ({
      n: i + 1,
      p: cache.forPage(paper, topicKey(paper)),
      matched: matchedView(paper),
      fb: feedbackView(paper),
    });
    const papers = view.papers.map(page);
    const suggestions = (view.suggestions ?? []).slice(0, 3).map(page);
    const edition = tidy(view.edition);
    return t.webPage({
      title: `Paper Digest · ${edition}`,
      edition,
      email: view.email,
      intro: view.expired
        ? 'This digest has expired: its list of papers is kept for a limited time (DIGEST_RETENTION_DAYS) and was removed.'
        : withDays(`${plural(papers.length, 'paper', 'papers')} matched your topics`, view),
      papers,
      suggestions,
      links: safeLinks(view.links),
    });
  };

  const confirm = (view: ConfirmView): RenderedEmail => {
    const already = view.alreadySubscribed;
    const manage = view.manageUrl === undefined ? '#' : safeHref(view.manageUrl);
    const buttonUrl = already ? manage : safeHref(view.confirmUrl);
    const heading = already ? 'You are already subscribed' : 'Confirm your subscription';
    const fill = {
      subject: already ? 'You are already subscribed to Paper Digest' : 'Confirm your subscription to Paper Digest',
      preview: already
        ? 'Someone asked to subscribe this address again. Nothing has changed.'
        : 'One click and your paper digest starts.',
      heading,
      email: view.email,
      alreadySubscribed: already,
      topics: view.topics.map(tidy).filter((s) => s !== ''),
      topicsLabel: 'Your topics:',
      buttonUrl: buttonUrl === '#' ? '' : buttonUrl,
      buttonLabel: already ? 'Manage preferences' : 'Confirm subscription',
      footer: already
        ? 'If you did not ask for this, you can ignore this email.'
        : 'If you did not ask for this, ignore this email: this address will not be subscribed.',
    };
    return { subject: fill.subject, html: t.confirmHtml(fill), text: t.confirmText(fill), shownPapers: 0 };
  };

  return { digest, webView, confirm };
}

/** How many leading cards fit beside a shell of `shellBytes`. */
function countFitting(htmlCards: readonly string[], shellBytes: number, limit: number): number {
  let used = shellBytes;
  for (let i = 0; i < htmlCards.length; i++) {
    used += byteLength(htmlCards[i] as string);
    if (used >= limit) return i;
  }
  return htmlCards.length;
}

function cardView(paper: DigestPaperView, index: number, cache: PaperPartsCache): CardView {
  return { n: index + 1, p: cache.forEmail(paper, topicKey(paper)), matched: matchedView(paper), fb: feedbackView(paper) };
}

/** Per-subscriber feedback links of a card (not cached: they are signed per subscriber). */
function feedbackView(paper: DigestPaperView): CardView['fb'] {
  const f = paper.feedback;
  if (f === undefined) return null;
  const follow = f.follow === undefined ? '#' : safeHref(f.follow.url);
  return {
    more: safeHref(f.more),
    less: safeHref(f.less),
    follow: follow === '#' ? null : follow,
    followName: f.follow === undefined ? '' : tidy(f.follow.name),
  };
}

/**
 * The matched topics as one highlighter's input: sorted, so the same set shares one highlighter. A
 * like: topic is highlighted by its terms (an OR query of the example's distinctive words).
 */
function topicKey(paper: DigestPaperView): string[] {
  return paper.matchedTopics.map((m) => m.highlight ?? m.text).sort();
}

function matchedView(paper: DigestPaperView): Array<{ text: string; muteUrl: string }> {
  return paper.matchedTopics.map((m) => ({ text: tidy(m.text), muteUrl: safeHref(m.muteUrl) }));
}

function safeLinks(links: Links): Links {
  return {
    preferences: safeHref(links.preferences),
    unsubscribe: safeHref(links.unsubscribe),
    webView: safeHref(links.webView),
    home: safeHref(links.home),
  };
}

function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** Fills every template once at start-up: a template naming a missing field fails here, not mid-send. */
function warmUp(renderer: Renderer): void {
  const links = {
    preferences: 'https://example.org/p',
    unsubscribe: 'https://example.org/u',
    webView: 'https://example.org/w',
    home: 'https://example.org/',
  };
  const paper: DigestPaperView = {
    title: 'Warm-up paper',
    url: 'https://example.org/paper',
    authors: ['A. Author'],
    abstract: 'A short abstract.',
    upvotes: 1,
    categories: ['cs.LG'],
    publishedAt: '2025-01-01',
    matchedTopics: [{ text: 'paper', muteUrl: 'https://example.org/m' }],
  };
  const view: DigestView = { email: 'warm@example.org', edition: '2025-01-01', papers: [paper], links };
  renderer.digest(view);
  renderer.webView(view);
  renderer.confirm({ email: 'warm@example.org', confirmUrl: links.home, topics: ['x'], alreadySubscribed: false });
  renderer.confirm({ email: 'warm@example.org', confirmUrl: links.home, topics: [], alreadySubscribed: true });
}
