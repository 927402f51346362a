// The project's own batch format (README, "Batch format"), validated with zod.
//   { "source": "hf-daily", "date": "2025-11-25",
//     "papers": [ { "id", "title", "abstract", "authors": [], "url", "publishedAt"?, "upvotes"?, "categories"? } ] }
// Unknown fields are ignored. Every error names its place: `papers[3].title: required`.
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { formatIssues } from './issues.ts';
import { isCalendarDate } from './normalize.ts';

/** Bounds that keep one bad file from filling the database. */
export const LIMITS = {
  papers: 20_000,
  title: 1_000,
  abstract: 50_000,
  /** Large collaborations list thousands of authors. */
  authors: 5_000,
  author: 300,
  categories: 50,
  id: 200,
  url: 2_000,
  source: 100,
} as const;

/** http: or https: with a host; zod's own url() also accepts javascript: and data:. */
export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

export const httpUrlSchema = z
  .string()
  .trim()
  .min(1)
  .max(LIMITS.url)
  .refine(isHttpUrl, { error: 'must be an http(s) URL' });

export const daySchema = z
  .string()
  .trim()
  .refine(isCalendarDate, { error: 'must be a date written YYYY-MM-DD' });

/** A date (YYYY-MM-DD) or an ISO date-time; kept as the calendar day it names. */
const publishedAtSchema = z
  .string()
  .trim()
  .refine((s) => /^\d{4}-\d{2}-\d{2}(?:$|T)/.test(s) && isCalendarDate(s.slice(0, 10)) && !Number.isNaN(Date.parse(s)), {
    error: 'must be a date (YYYY-MM-DD) or an ISO date-time',
  })
  .transform((s) => s.slice(0, 10));

const idSchema = z.union([z.string().trim().min(1).max(LIMITS.id), z.number()]).refine((v) => typeof v === 'string', {
  // A bare number has already lost its trailing zeros (2501.00010 -> 2501.0001): refuse it.
  error: 'must be a string: write arXiv ids in quotes, e.g. "2501.00010"',
});

export const batchPaperSchema = z.object({
  id: idSchema.transform((v) => String(v)),
  title: z.string().trim().min(1).max(LIMITS.title),
  abstract: z.string().max(LIMITS.abstract),
  authors: z.array(z.string().trim().min(1).max(LIMITS.author)).max(LIMITS.authors).default([]),
  url: httpUrlSchema,
  publishedAt: publishedAtSchema.nullish(),
  upvotes: z.number().int().min(0).max(10_000_000).default(0),
  categories: z.array(z.string().trim().min(1).max(50)).max(LIMITS.categories).default([]),
  /** The paper's code repository (optional, http(s)). */
  codeUrl: httpUrlSchema.nullish(),
});

export const batchSchema = z.object({
  source: z.string().trim().min(1).max(LIMITS.source),
  date: daySchema,
  papers: z.array(batchPaperSchema).max(LIMITS.papers),
});

export type BatchFile = z.infer<typeof batchSchema>;

/** Validates a parsed batch file; throws BATCH_INVALID with the first problem's place. */
export function validateBatchFile(value: unknown): BatchFile {
  const r = batchSchema.safeParse(value, { reportInput: true });
  if (!r.success) throw new AppError('BATCH_INVALID', `Invalid batch: ${formatIssues(r.error.issues)}`);
  return r.data;
}
