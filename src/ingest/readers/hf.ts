// Reader for the Hugging Face Daily Papers API (GET /api/daily_papers?date=YYYY-MM-DD):
// an array of { paper: { id, title, summary, authors: [{ name }], publishedAt, upvotes, … }, title, summary, publishedAt, … }.
// paper.id is the arXiv id; the page of a paper is https://huggingface.co/papers/<id>.
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import type { IncomingBatch, IncomingPaper } from '../../types.ts';
import { isHttpUrl, LIMITS } from '../batch-schema.ts';
import { formatIssues } from '../issues.ts';
import { dayOf, paperKey, tidyAbstract, tidyTitle, tidyWhitespace } from '../normalize.ts';

export const HF_PAPER_PAGE = 'https://huggingface.co/papers/';
export const HF_DEFAULT_SOURCE = 'hf';

const optionalText = z.string().nullish();

const hfItemSchema = z.object({
  paper: z.object({
    id: z.string().trim().min(1).max(LIMITS.id),
    title: optionalText,
    summary: optionalText,
    authors: z.array(z.object({ name: z.string().nullish() })).max(LIMITS.authors).nullish(),
    publishedAt: optionalText,
    upvotes: z.number().int().min(0).nullish(),
    /** The paper's code repository as Hugging Face links it; anything but an http(s) URL is dropped. */
    githubRepo: z.string().max(LIMITS.url).nullish(),
  }),
  title: optionalText,
  summary: optionalText,
  publishedAt: optionalText,
});

const hfListSchema = z.array(hfItemSchema).max(LIMITS.papers);

export interface HfReadOptions {
  source?: string;
  /** The day asked for; without it, the latest submission day among the items. */
  date?: string;
}

function malformed(detail: string): AppError {
  return new AppError('FEED_MALFORMED', `Invalid Hugging Face daily papers JSON: ${detail}`);
}

/** A parsed daily-papers response as an IncomingBatch. Refuses the whole response when any item is malformed. */
export function readHfDaily(value: unknown, opts: HfReadOptions = {}): IncomingBatch {
  const r = hfListSchema.safeParse(value, { reportInput: true });
  if (!r.success) throw malformed(formatIssues(r.error.issues));
  const seen = new Set<string>();
  const papers: IncomingPaper[] = [];
  const days: string[] = [];
  r.data.forEach((item, i) => {
    const p = item.paper;
    const title = tidyTitle(p.title ?? item.title ?? '');
    if (title === '') throw malformed(`[${i}].paper.title: required`);
    if (title.length > LIMITS.title) throw malformed(`[${i}].paper.title: too long (at most ${LIMITS.title} characters)`);
    const key = paperKey(p.id);
    const submitted = dayOf(item.publishedAt);
    if (submitted) days.push(submitted);
    // The same paper twice in one day's list is listed once.
    if (seen.has(key)) return;
    seen.add(key);
    papers.push({
      key,
      title,
      abstract: tidyAbstract(p.summary ?? item.summary ?? '').slice(0, LIMITS.abstract),
      authors: (p.authors ?? []).map((a) => tidyWhitespace(a.name ?? '')).filter((n) => n !== ''),
      url: HF_PAPER_PAGE + encodeURIComponent(key).replace(/%2F/g, '/'),
      publishedAt: dayOf(p.publishedAt) ?? dayOf(item.publishedAt),
      upvotes: p.upvotes ?? 0,
      categories: [],
      ...(p.githubRepo && isHttpUrl(p.githubRepo.trim()) ? { codeUrl: p.githubRepo.trim() } : {}),
    });
  });
  const date = opts.date ?? days.sort().at(-1);
  if (!date) throw malformed('no date: the list is empty and no date was given');
  return { source: opts.source ?? HF_DEFAULT_SOURCE, date, papers };
}
