// A paper as one digest shows it (DigestLoader, view.ts): the run's fields, read once and shared by every
// digest that holds the paper, with this reader's matched topics and feedback links.
import type { DigestPaperView, FeedbackLinks } from './render.ts';

/** A paper's fields as every digest shows them (the matched topics and feedback links are per subscriber). */
export type PaperFields = Omit<DigestPaperView, 'matchedTopics' | 'feedback'>;

/** Makes a paper's feedback links for one digest (DigestLoader: one per digest, not a closure per paper). */
export interface FeedbackSource {
  feedback(paperId: number, authors: string[]): FeedbackLinks;
}

/**
 * A paper as one digest shows it: the run's shared fields, this reader's matched topics, and feedback
 * links built when first read. A long digest holds far more papers than its email shows (broad: ~190
 * held, ~40 shown), so the unshown ones' links are never built (the links share the digest's one
 * token, signed in load(), so what is saved is string building, no longer an HMAC each). A class with
 * one shape: building ~190 per digest by object spread was 9% of a broad send's CPU.
 */
export class LoadedPaper implements DigestPaperView {
  readonly title: string;
  readonly url: string;
  readonly authors: string[];
  readonly abstract: string;
  readonly upvotes: number;
  readonly categories: string[];
  readonly publishedAt: string | null;
  readonly codeUrl: string | null | undefined;
  readonly runTopics: string[] | undefined;
  private links: FeedbackLinks | undefined;

  constructor(
    fields: PaperFields,
    readonly matchedTopics: DigestPaperView['matchedTopics'],
    private readonly paperId: number,
    private readonly source: FeedbackSource,
  ) {
    this.title = fields.title;
    this.url = fields.url;
    this.authors = fields.authors;
    this.abstract = fields.abstract;
    this.upvotes = fields.upvotes;
    this.categories = fields.categories;
    this.publishedAt = fields.publishedAt;
    this.codeUrl = fields.codeUrl;
    this.runTopics = fields.runTopics;
  }

  get feedback(): FeedbackLinks {
    return (this.links ??= this.source.feedback(this.paperId, this.authors));
  }
}
