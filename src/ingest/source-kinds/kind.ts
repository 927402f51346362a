// What a kind of paper source is: its name in SOURCES, the settings it reads, when it is asked, and how
// it fetches one day. Each kind is one file in this folder, listed once in registry.ts; parsing SOURCES,
// polling, `digest sources` and status all work from that list.
import type { z } from 'zod';
import { AppError } from '../../errors.ts';
import type { IncomingPaper } from '../../types.ts';
import type { FetchOptions } from '../fetch.ts';
import type { SourceSpec } from '../source-spec.ts';

/** What one fetch found. `not-yet`: the source says the day has not come (Hugging Face's 400 for a future date). */
export type DayFetch =
  | { outcome: 'papers'; day: string; papers: IncomingPaper[] }
  | { outcome: 'empty'; day: string; detail?: string }
  | { outcome: 'not-yet'; day: string; detail: string };

/**
 * When a source is asked:
 * - `dated`: by day; every day of the look-back window (up to today + `lastDay`) that is not final yet is
 *   asked, again at most every `refreshMs`, and is final once fetched `settleMs` after the day ended;
 * - `latest`: the source has no date parameter, its listing names its own day (arXiv RSS); asked every
 *   tick, a day already ingested is not ingested again.
 */
export type SourceSchedule = { kind: 'dated'; lastDay: 0 | -1; settleMs: number; refreshMs: number } | { kind: 'latest' };

export interface FetchContext<Settings> {
  spec: SourceSpec;
  /** UTC date of the tick. */
  today: string;
  settings: Settings;
  fetch: FetchOptions;
}

export interface SourceKind<Shape extends z.ZodRawShape = z.ZodRawShape> {
  /** The SOURCES entry's prefix: `hf`, `arxiv`, `arxiv-api`. */
  name: string;
  /** What it fetches, for errors and `digest sources`. */
  title: string;
  /** Whether entries name arXiv categories (`arxiv:cs.LG+cs.CL`). */
  categories: boolean;
  /** Environment variables this kind reads (merged into the service's config schema, in .env.example). */
  settings: Shape;
  schedule: SourceSchedule;
  /** Hosts to space requests to, and by how many ms (arXiv asks for 3 s between requests). */
  spacing?(settings: z.output<z.ZodObject<Shape>>): Record<string, number>;
  fetchDay(ctx: FetchContext<z.output<z.ZodObject<Shape>>>, day: string): Promise<DayFetch>;
}

/** A kind as the registry lists it, its settings' type erased (each kind's own file keeps it). */
export interface AnySourceKind extends Omit<SourceKind, 'spacing' | 'fetchDay'> {
  spacing?(settings: object): Record<string, number>;
  fetchDay(ctx: FetchContext<object>, day: string): Promise<DayFetch>;
}

/** Declares a kind with its settings' types checked against its fetcher. */
export function defineSourceKind<Shape extends z.ZodRawShape>(kind: SourceKind<Shape>): SourceKind<Shape> {
  return kind;
}

export function snippet(text: string): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > 160 ? `${s.slice(0, 160)}…` : s;
}

export function httpError(url: string, status: number, body: string): AppError {
  return new AppError('SOURCE_HTTP_ERROR', `GET ${url} answered HTTP ${status}${body ? `: ${snippet(body)}` : ''}`, {
    temporary: status === 408,
  });
}
