// Domain types shared across modules. Rows are mapped to these by the repositories.

/**
 * A paper: the one type every stage describes a paper with. A stage that needs less takes a narrow view
 * of it (`Pick<Paper, …>` or `Omit<Paper, …>`, named where it is used); the papers table is read into it
 * by db/paper-row.ts.
 */
export interface Paper {
  /** Row id in `papers`: grows with each new paper and is never reused (digests hold id ranges). */
  id: number;
  /** Normalised id: arXiv id without version ("2511.01234"), or another stable source id. */
  key: string;
  title: string;
  abstract: string;
  authors: string[];
  /** http(s) only. */
  url: string;
  publishedAt: string | null;
  upvotes: number;
  categories: string[];
  /** The paper's code repository (http(s)), when a source named one (Hugging Face's githubRepo). */
  codeUrl: string | null;
}

/** A paper as the ingest layer hands it over (validated, ids normalised, text tidied): no row id yet. */
export type IncomingPaper = Omit<Paper, 'id' | 'codeUrl'> & { codeUrl?: string | null | undefined };

/** One day of one source, or one file: the unit of ingest. */
export interface IncomingBatch {
  source: string;
  /** YYYY-MM-DD: the day the batch is for; shown as metadata, never decides when mail goes out. */
  date: string;
  papers: IncomingPaper[];
}

export type SubscriberStatus = 'pending' | 'confirmed' | 'unsubscribed' | 'suppressed';

/** Why an address left (its opt-out history, src/consent/history.ts). */
export type OptOutKind = 'unsubscribe' | 'complaint' | 'hard-bounce' | 'operator';
export type Frequency = 'daily' | 'weekly';

export interface Subscriber {
  id: number;
  email: string;
  status: SubscriberStatus;
  tokenSalt: string;
  timezone: string;
  deliveryHour: number;
  frequency: Frequency;
  weeklyDay: number;
  pausedUntil: string | null;
  watermark: number;
  /** Subscriber-local date of the last slot that ran (sent or not). */
  lastSlot: string | null;
  hardFailures: number;
  createdAt: string;
  confirmedAt: string | null;
}

export interface Topic {
  id: number;
  subscriberId: number;
  queryId: number;
  /** As the subscriber typed it. */
  text: string;
  muted: boolean;
  position: number;
}

export type DigestStatus = 'planned' | 'sending' | 'retry' | 'sent' | 'failed' | 'unknown' | 'suppressed';
