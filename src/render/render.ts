// The renderer: digest email (HTML + text), confirmation email and the digest's web page.
// MJML runs once per template (at build or start-up, render-templates.ts); per subscriber only
// precompiled Handlebars fills of their own lines run, over cards that are filled and encoded once per
// run (card-cache.ts, digest-email.ts). Long digests show the best DIGEST_FULL_PAPERS papers in full,
// the rest as compact lines, under Gmail's clipping size by construction.
import type { Logger } from '../log.ts';
import { CardCache, DEFAULT_CARD_CACHE_BYTES } from './card-cache.ts';
import { matchedView, safeLinks, topicKey } from './card-views.ts';
import { emailPaperLimit, followedNames, renderDigestEmail, type DigestLayout } from './digest-email.ts';
import { ArenaPool } from './encode/qp-body.ts';
import { ReaderShapes } from './reader-shape.ts';
import { ShellShapes } from './digest-shell.ts';
import { paperDaysLabel, plural, safeHref, tidy } from './render-format.ts';
import { buildParts, type PaperInput } from './render-parts.ts';
import type { DigestPaperView, DigestView, RenderedEmail } from './digest-types.ts';
import { compileTemplates, compileTemplateSources, type CompiledTemplates, type TemplateSources } from './render-templates.ts';

export type { DigestPaperView, DigestView, FeedbackLinks, RenderedEmail } from './digest-types.ts';

export interface ConfirmView {
  email: string;
  confirmUrl: string;
  /** How many topics were asked for: the email never shows what the requester typed (the page does). */
  topicCount: number;
  alreadySubscribed: boolean;
  manageUrl?: string;
  /** When digests come once confirmed, in the reader's zone ("every day at 07:00, Europe/Berlin"). */
  schedule?: string;
}

export interface Renderer {
  /** Synchronous fill of precompiled templates. */
  digest(view: DigestView): RenderedEmail;
  confirm(view: ConfirmView): RenderedEmail;
  /** Full HTML page listing ALL papers (no cap), no external assets. */
  webView(view: DigestView): string;
  /** Papers a digest email looks at, at most (the rest are counted): what the loader need make (LoadOptions.papers). */
  emailPapers?: number;
  /** The card cache of this renderer (this thread): entries, bytes, hits, misses. */
  cacheStats?(): { entries: number; bytes: number; hits: number; misses: number };
}

export interface RendererOptions {
  templatesDir?: string;
  logger?: Logger;
  /** Largest digest HTML in UTF-8 bytes (exclusive). Gmail clips at about 102 KB. */
  htmlByteLimit?: number;
  /** Templates already through MJML (readTemplateSources): no MJML runs or loads (send worker threads). */
  sources?: TemplateSources;
  /** Papers shown in full before the rest become compact lines (DIGEST_FULL_PAPERS). */
  fullPapers?: number;
  /** Compact lines at most after them (the rest: the web view's link). */
  compactPapers?: number;
  /** Bytes of encoded cards kept per renderer (RENDER_CACHE_MB). */
  cardCacheBytes?: number;
  /** false: the shell and every reader part filled by Handlebars (tests compare the two ways; reader-shape.ts, digest-shell.ts). */
  readerShapes?: boolean;
}

/** Default DIGEST_FULL_PAPERS: the top picks, with short abstracts (a 5-paper digest is all in full). */
export const DEFAULT_FULL_PAPERS = 5;
/**
 * Compact lines past the full cards: "the best 5 in full, the next 20 in short, all of them on the web".
 * A 60-paper digest then reads in about six phone screens.
 * Measured: BENCHMARKS.md § Why the code is shaped this way, render.ts.
 */
export const DEFAULT_COMPACT_PAPERS = 20;

/** Digest HTML must stay below this many UTF-8 bytes, or Gmail clips it (footer links included). */
export const HTML_BYTE_LIMIT = 100_000;

export async function createRenderer(opts: RendererOptions = {}): Promise<Renderer> {
  const templates = opts.sources ? compileTemplateSources(opts.sources) : await compileTemplates(opts.templatesDir);
  const cache = new CardCache(templates, opts.cardCacheBytes ?? DEFAULT_CARD_CACHE_BYTES, opts.logger);
  const layout = {
    htmlByteLimit: opts.htmlByteLimit ?? HTML_BYTE_LIMIT,
    fullPapers: opts.fullPapers ?? DEFAULT_FULL_PAPERS,
    compactPapers: opts.compactPapers ?? DEFAULT_COMPACT_PAPERS,
    arenas: new ArenaPool(),
    shapes: opts.readerShapes === false ? undefined : new ReaderShapes(templates),
    shellShapes: opts.readerShapes === false ? undefined : new ShellShapes(templates),
  };
  const renderer = makeRenderer(templates, cache, layout);
  warmUp(renderer);
  return renderer;
}

/** "12 new papers matched your topics (papers of 24–25 Nov)." */
function withDays(sentence: string, view: DigestView): string {
  const days = paperDaysLabel(view.paperDays);
  return days === '' ? `${sentence}.` : `${sentence} (${days}).`;
}

function makeRenderer(t: CompiledTemplates, cache: CardCache, layout: DigestLayout): Renderer {
  const digest = (view: DigestView): RenderedEmail => renderDigestEmail(t, cache, view, layout);

  // The web view is what its link may be shared as: it shows the papers and why they matched, never the
  // reader's address nor a link that acts for them (preferences, unsubscribe, mute, feedback, follow).
  const webView = (view: DigestView): string => {
    const page = (paper: DigestPaperView, i: number) => {
      // No mute link: the web view acts for nobody (see above).
      const matched = matchedView(paper).map(({ text }) => ({ text, muteUrl: '' }));
      return {
        n: i + 1,
        p: pageParts(paper, topicKey(paper), cache),
        matched,
        // The paper sits under its first topic's heading; the others are named on it.
        also: matched.slice(1).map((m) => m.text).join(', '),
      };
    };
    const papers = view.papers.map(page);
    const suggestions = (view.suggestions ?? []).slice(0, 3).map((paper, i) => ({ ...page(paper, i), why: paper.because ?? '' }));
    const followed = (view.followed ?? []).map((paper, i) => ({ ...page(paper, i), why: followedNames(paper) }));
    const edition = tidy(view.edition);
    const groups = webGroups(papers);
    return t.webPage({
      title: `Paper Digest · ${edition}`,
      edition,
      intro: view.expired
        ? 'This digest has expired: its list of papers is kept for a limited time (DIGEST_RETENTION_DAYS) and was removed.'
        : withDays(`${plural(papers.length - (view.suggestedInList ?? 0), 'paper', 'papers')} matched your topics${view.suggestedInList ? ` and ${view.suggestedInList} suggested by your model` : ''}${followed.length > 0 ? `, and ${followed.length} from ${followed.length === 1 ? 'an author' : 'authors'} you follow` : ''}`, view),
      groups,
      filter: groups.length > 1,
      papers,
      suggestions,
      followed,
      links: { home: safeLinks(view.links).home },
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
      topicsLine: already || view.topicCount <= 0 ? '' : `${plural(view.topicCount, 'topic', 'topics')} chosen: you will see them on the page the button opens, and can change them there.`,
      buttonUrl: buttonUrl === '#' ? '' : buttonUrl,
      buttonLabel: already ? 'Manage preferences' : 'Confirm subscription',
      // Our own words from the reader's schedule: no text the requester typed.
      when: already || view.schedule === undefined ? '' : `Your digest comes ${tidy(view.schedule)}. The first one comes as soon as you confirm if papers of the last day match your topics; otherwise at your next delivery time.`,
      footer: already
        ? 'If you did not ask for this, you can ignore this email.'
        : 'If you did not ask for this, ignore this email: this address will not be subscribed.',
    };
    return { subject: fill.subject, html: t.confirmHtml(fill), text: t.confirmText(fill), shownPapers: 0 };
  };

  const cacheStats = () => ({ entries: cache.size, bytes: cache.bytes, hits: cache.hits, misses: cache.misses });
  return { digest, webView, confirm, cacheStats, emailPapers: emailPaperLimit(layout) };
}

/**
 * The web view's papers under their topic's heading (the first of each paper's matched topics), the
 * groups in the order of their best paper and each group's papers in the digest's order.
 */
function webGroups<P extends { matched: Array<{ text: string; muteUrl: string }> }>(papers: P[]) {
  const groups = new Map<string, { id: number; label: string; muteUrl: string; papers: P[] }>();
  for (const paper of papers) {
    const first = paper.matched[0];
    const key = first?.text ?? '';
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { id: groups.size + 1, label: key === '' ? 'Other papers' : key, muteUrl: first?.muteUrl ?? '', papers: [] }));
    g.papers.push(paper);
  }
  return [...groups.values()].map((g) => ({ ...g, count: plural(g.papers.length, 'paper', 'papers') }));
}

/** Web page card parts (whole abstract), not cached: the page is opened rarely. */
function pageParts(paper: PaperInput, topicTexts: string[], cache: CardCache) {
  return buildParts(paper, cache.highlighter(topicTexts.join('\u0001'), topicTexts), Number.POSITIVE_INFINITY);
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
  renderer.confirm({ email: 'warm@example.org', confirmUrl: links.home, topicCount: 1, alreadySubscribed: false });
  renderer.confirm({ email: 'warm@example.org', confirmUrl: links.home, topicCount: 0, alreadySubscribed: true });
}
