// Every kind of paper source the service knows. Adding one: a new file in this folder (see kind.ts, and
// hf.ts for a small one) and its entry in KINDS below; SOURCES, the config schema (its settings),
// `digest sources` and status pick it up from here.
import type { z } from 'zod';
import { arxivApiSource } from './arxiv-api.ts';
import { arxivRssSource } from './arxiv-rss.ts';
import { hfSource } from './hf.ts';
import type { AnySourceKind } from './kind.ts';

const KINDS = [hfSource, arxivRssSource, arxivApiSource] as const;

export const SOURCE_KINDS: readonly AnySourceKind[] = KINDS;

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** The environment variables of every kind (zod shapes, merged), for src/config.ts. */
export const sourceSettings = Object.assign({}, ...KINDS.map((k) => k.settings)) as UnionToIntersection<(typeof KINDS)[number]['settings']>;

/**
 * The settings the sources read: the fetch's, the look-back and each kind's own. src/config.ts's `Config`
 * has them all; ingest names only these, so the settings file may import the kinds and not the reverse.
 */
export type SourceSettings = { [K in keyof typeof sourceSettings]: z.output<(typeof sourceSettings)[K]> } & {
  SOURCES: string;
  SOURCE_LOOKBACK_DAYS: number;
  FETCH_TIMEOUT_MS: number;
  FETCH_RETRIES: number;
};

/** `hf, arxiv:<categories>, arxiv-api:<categories>`: what SOURCES accepts, for error messages. */
export function sourceKindList(kinds: readonly AnySourceKind[] = SOURCE_KINDS): string {
  return kinds.map((k) => (k.categories ? `${k.name}:<categories>` : k.name)).join(', ');
}
