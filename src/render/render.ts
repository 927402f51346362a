// The renderer: digest email (HTML + text), confirmation email and the digest's web page.
// MJML runs once per template (at build or start-up, render-templates.ts); per subscriber only
// precompiled Handlebars fills of their own lines run, over cards that are filled and encoded once per
// run (card-cache.ts, digest-email.ts). Long digests show the best DIGEST_FULL_PAPERS papers in full,
// the rest as compact lines, under Gmail's clipping size by construction.
import type { Logger } from '../log.ts';
import { CardCache, DEFAULT_CARD_CACHE_BYTES } from './card-cache.ts';
import { emailPaperLimit, feedbackView, matchedView, renderDigestEmail, safeLinks, topicKey, type DigestLayout } from './digest-email.ts';
import { ArenaPool } from '../mail/qp-body.ts';
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

/** Default DIGEST_FULL_PAPERS. */
export const DEFAULT_FULL_PAPERS = 25;
/**
 * Compact lines past the full cards: "the best 25 in full, the next 25 in short, all of them on the web".
 * About what a broad digest showed when the clipping size bounded it (25 full + ~15 compact, 148 KB
 * messages); with the lean card markup, 100 KB of HTML would hold ~65 lines (a 165 KB message).
 */
export const DEFAULT_COMPACT_PAPERS = 25;

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

  const webView = (view: DigestView): string => {
    const page = (paper: DigestPaperView, i: number) => ({
      n: i + 1,
      p: pageParts(paper, topicKey(paper), cache),
      matched: matchedView(paper),
      fb: feedbackView(paper),
    });
    const papers = view.papers.map(page);
    const suggestions = (view.suggestions ?? []).slice(0, 3).map((paper, i) => ({ ...page(paper, i), why: paper.because ?? '' }));
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

  const cacheStats = () => ({ entries: cache.size, bytes: cache.bytes, hits: cache.hits, misses: cache.misses });
  return { digest, webView, confirm, cacheStats, emailPapers: emailPaperLimit(layout) };
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
  renderer.confirm({ email: 'warm@example.org', confirmUrl: links.home, topics: ['x'], alreadySubscribed: false });
  renderer.confirm({ email: 'warm@example.org', confirmUrl: links.home, topics: [], alreadySubscribed: true });
}
