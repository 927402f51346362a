// Trains one reader's model from their own signals and stores it (reader_models): "more like this" and
// following an author (a "more" on that paper) are positives, "less like this" negatives, papers their
// digests showed that only muted topics matched negatives too, and the other papers they were shown and
// did not vote on weak negatives (context: what they saw and passed over). Run when a vote arrives, in
// the vote's transaction (a few ms to a few tens of ms), and at plan time for a reader who voted before
// models existed (model-pass.ts).
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { corpusStats } from '../match/like/terms.ts';
import { eachItem, parseTopicIds, plainItems } from '../ledger/index.ts';
import { fitPlatt, outOfFoldScores, trainLogistic, type Example } from './model.ts';
import { ensurePaperTerms } from '../match/paper-terms.ts';
import { heldOutQuality, type HeldOutQuality } from './quality.ts';

/** Weights kept per model: bounds what scoring a day's papers costs per reader (model-pass.ts). */
export const MODEL_TERMS = 64;
/** Digests whose papers are the reader's context (the newest ones). */
export const CONTEXT_DIGESTS = 10;
/** Context papers kept at most (the newest). */
export const MAX_CONTEXT = 400;
/** A shown paper that was not voted on counts this much as a negative (a vote counts 1). */
export const CONTEXT_WEIGHT = 0.3;
const FOLDS = 4;

const SQL_VOTES = `SELECT paper_id AS paperId, vote FROM feedback WHERE subscriber_id = ? ORDER BY at, paper_id`;
const SQL_RECENT_DIGESTS = `
  SELECT d.id, d.from_paper AS fromPaper, d.to_paper AS toPaper, d.items, d.topic_ids AS topicIds,
         (SELECT json_group_array(paper_id) FROM digest_suggestions s WHERE s.digest_id = d.id) AS suggested
  FROM digests d WHERE d.subscriber_id = ? AND d.items IS NOT NULL AND d.status <> 'planned'
  ORDER BY d.id DESC LIMIT ${CONTEXT_DIGESTS}`;
const SQL_MUTED = `SELECT id FROM topics WHERE subscriber_id = ? AND muted = 1`;
const SQL_VECTORS = `SELECT paper_id AS paperId, term, weight FROM paper_terms WHERE paper_id IN (SELECT value FROM json_each(?))`;
const SQL_SAVE = `
  INSERT INTO reader_models (subscriber_id, bias, cal_a, cal_b, weights, positives, negatives, context, trained_at)
  VALUES (@sid, @bias, @a, @b, @weights, @positives, @negatives, @context, @at)
  ON CONFLICT (subscriber_id) DO UPDATE SET bias = excluded.bias, cal_a = excluded.cal_a, cal_b = excluded.cal_b,
    weights = excluded.weights, positives = excluded.positives, negatives = excluded.negatives,
    context = excluded.context, trained_at = excluded.trained_at`;
const SQL_DROP = `DELETE FROM reader_models WHERE subscriber_id = ?`;

interface DigestRow {
  id: number;
  fromPaper: number;
  toPaper: number;
  items: Buffer;
  topicIds: string;
  suggested: string;
}

/** The stored form of a model's kept weights (reader_models.weights). */
export interface StoredWeights {
  t: string[];
  w: number[];
  a: Array<number | null>;
  /** Held-out quality measured at training (quality.ts); absent in models stored before it. */
  q?: HeldOutQuality;
}

interface Labelled {
  paperId: number;
  y: 0 | 1;
  c: number;
}

/** The reader's labelled papers: votes first, then what their digests showed (newest first, bounded). */
function labelledPapers(db: Db, subscriberId: number): Labelled[] {
  const votes = statement<[number], { paperId: number; vote: number }>(db, SQL_VOTES).all(subscriberId);
  const out: Labelled[] = votes.map((v) => ({ paperId: v.paperId, y: v.vote > 0 ? 1 : 0, c: 1 }));
  const seen = new Set(out.map((l) => l.paperId));
  const muted = new Set(statement<[number], { id: number }>(db, SQL_MUTED).all(subscriberId).map((t) => t.id));
  let context = 0;
  for (const d of statement<[number], DigestRow>(db, SQL_RECENT_DIGESTS).all(subscriberId)) {
    const topics = parseTopicIds(d.topicIds);
    const shown: Array<{ paperId: number; mutedOnly: boolean }> = [];
    eachItem(plainItems(db, d.items, d.fromPaper, d.toPaper), d.fromPaper, topics.length, (paperId, mask) => {
      let onlyMuted = mask !== 0;
      for (let bit = 0; bit < topics.length; bit++) if (mask & (1 << bit) && !muted.has(topics[bit]!)) onlyMuted = false;
      shown.push({ paperId, mutedOnly: onlyMuted });
    });
    for (const id of JSON.parse(d.suggested) as number[]) shown.push({ paperId: id, mutedOnly: false });
    for (const s of shown) {
      if (seen.has(s.paperId) || context >= MAX_CONTEXT) continue;
      seen.add(s.paperId);
      out.push({ paperId: s.paperId, y: 0, c: s.mutedOnly ? 1 : CONTEXT_WEIGHT });
      context++;
    }
  }
  return out;
}

/** Trains and stores the reader's model; without a positive vote there is none (and an old one goes). */
export function trainReaderModel(db: Db, subscriberId: number, at: Date): boolean {
  const labelled = labelledPapers(db, subscriberId);
  const positives = labelled.filter((l) => l.y === 1).length;
  if (positives === 0 || positives === labelled.length) {
    statement(db, SQL_DROP).run(subscriberId);
    return false;
  }
  const stats = corpusStats(db);
  for (const l of labelled) ensurePaperTerms(db, l.paperId, stats);
  const vectors = new Map<number, { idx: number[]; val: number[] }>();
  const terms: string[] = [];
  const termIndex = new Map<string, number>();
  for (const r of statement<[string], { paperId: number; term: string; weight: number }>(db, SQL_VECTORS).all(JSON.stringify(labelled.map((l) => l.paperId)))) {
    let j = termIndex.get(r.term);
    if (j === undefined) termIndex.set(r.term, (j = terms.push(r.term) - 1));
    let v = vectors.get(r.paperId);
    if (!v) vectors.set(r.paperId, (v = { idx: [], val: [] }));
    v.idx.push(j);
    v.val.push(r.weight);
  }
  const examples: Array<Example & { paperId: number }> = [];
  for (const l of labelled) {
    const v = vectors.get(l.paperId);
    if (v) examples.push({ ...v, y: l.y, c: l.c, paperId: l.paperId });
  }
  const model = trainLogistic(examples, terms.length);
  const heldOut = outOfFoldScores(examples, terms.length, FOLDS);
  const cal = fitPlatt(heldOut, examples);
  const q = heldOutQuality(heldOut, examples);
  const weights: StoredWeights = { ...keptWeights(model.w, terms, examples), q: { auc: round4(q.auc), n1: round4(q.n1), n0: round4(q.n0) } };
  statement(db, SQL_SAVE).run({
    sid: subscriberId,
    bias: model.bias,
    a: cal.a,
    b: cal.b,
    weights: JSON.stringify(weights),
    positives,
    negatives: labelled.filter((l) => l.y === 0 && l.c >= 1).length,
    context: labelled.filter((l) => l.c < 1).length,
    at: at.toISOString(),
  });
  return true;
}

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

/** The MODEL_TERMS strongest weights, each positive one with the liked paper it weighs most in. */
function keptWeights(w: Float64Array, terms: string[], examples: ReadonlyArray<Example & { paperId: number }>): StoredWeights {
  const order = [...w.keys()].sort((x, y) => Math.abs(w[y]!) - Math.abs(w[x]!) || x - y).slice(0, MODEL_TERMS);
  const anchor = new Map<number, { paperId: number; v: number }>();
  for (const e of examples) {
    if (e.y !== 1) continue;
    for (let k = 0; k < e.idx.length; k++) {
      const best = anchor.get(e.idx[k]!);
      if (!best || e.val[k]! > best.v) anchor.set(e.idx[k]!, { paperId: e.paperId, v: e.val[k]! });
    }
  }
  const kept = order.filter((j) => Math.abs(w[j]!) > 1e-6);
  return {
    t: kept.map((j) => terms[j]!),
    w: kept.map((j) => Math.round(w[j]! * 1e5) / 1e5),
    a: kept.map((j) => (w[j]! > 0 ? (anchor.get(j)?.paperId ?? null) : null)),
  };
}
