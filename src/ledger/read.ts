// The row -> view read: one ledger row with its subscriber, their topics and the row's suggestions, as
// the renderer's loader (render/view.ts DigestLoader) needs it. The loader's paper reads and caches stay in render/.
import type { Db } from '../db/open.ts';
import type { DigestStatus, SubscriberStatus } from '../types.ts';

export interface DigestRecord {
  id: number;
  subscriberId: number;
  edition: string;
  status: DigestStatus;
  fromPaper: number;
  toPaper: number;
  attempts: number;
  /** The paper list was pruned after DIGEST_RETENTION_DAYS: the web view says the digest expired. */
  expired: boolean;
  /** Signed into the VERP envelope sender (bounces/verp.ts); null for rows planned before migration 010. */
  verpNonce: number | null;
}

export interface DigestRecipient {
  id: number;
  email: string;
  status: SubscriberStatus;
  tokenSalt: string;
}

/**
 * The row with its subscriber, and the subscriber's topics as JSON [[id, text, like_terms], …] (to name the
 * matched topics and build their mute links; a like: topic's terms are what gets highlighted). One
 * statement instead of two: a second statement per digest cost ~25 µs of a sending thread (better-sqlite3
 * makes an object per row), the JSON ~2 µs to parse. The suggestions (at most MAX_SUGGESTIONS a row,
 * feedback/suggest.ts) come unordered and are ordered here: ORDER BY … LIMIT in the statement made SQLite
 * open a temporary b-tree for every row loaded (~3 µs of the statement's ~27, bench on a 20k broad ledger).
 */
const SQL_DIGEST_ROW = `
  SELECT d.id, d.subscriber_id, d.edition, d.status, d.from_paper, d.to_paper, d.attempts, d.items, d.topic_ids, d.verp_nonce,
         s.email, s.status AS subscriber_status, s.token_salt, s.max_papers,
         (SELECT json_group_array(json_array(t.id, t.text, q.like_terms))
          FROM topics t JOIN queries q ON q.id = t.query_id WHERE t.subscriber_id = d.subscriber_id) AS topics,
         (SELECT json_group_array(json_array(ds.paper_id, ds.score, rp.title)) FROM digest_suggestions ds
          LEFT JOIN papers rp ON rp.id = ds.reason_paper WHERE ds.digest_id = d.id) AS suggestions
  FROM digests d
  JOIN subscribers s ON s.id = d.subscriber_id
  WHERE d.id = ?`;

/** SQL_DIGEST_ROW's row. */
export interface DigestRowSql {
  id: number;
  subscriber_id: number;
  edition: string;
  status: DigestStatus;
  from_paper: number;
  to_paper: number;
  attempts: number;
  items: Buffer | null;
  verp_nonce: number | null;
  topic_ids: string;
  email: string;
  subscriber_status: SubscriberStatus;
  token_salt: string;
  max_papers: number | null;
  /** JSON: [[id, text, like_terms], …] */
  topics: string;
  /** JSON: the row's "you may also like" papers as [paper id, score, title of the liked paper behind it] (written by the planner, src/feedback/model-pass.ts), unordered. */
  suggestions: string;
}

/**
 * The row read, prepared once per connection: `(digestId)` gives a DigestRowSql or undefined. The statement
 * runs in raw mode (an array per row) and the row object is a literal made here: better-sqlite3 builds a row
 * object key by key, ~2-3 µs of the statement's ~11 µs on a diverse 100k ledger (BENCHMARKS.md, issue 41,
 * branch `loader-41`); a literal of one shape costs next to nothing and keeps the loader's reads monomorphic.
 */
export function digestRowReader(db: Db): (digestId: number) => DigestRowSql | undefined {
  let read = readers.get(db);
  if (read === undefined) readers.set(db, (read = rowReader(db)));
  return read;
}

/** One reader per connection (the web view makes a loader per request). */
const readers = new WeakMap<Db, (digestId: number) => DigestRowSql | undefined>();

function rowReader(db: Db): (digestId: number) => DigestRowSql | undefined {
  // Its own statement (not statement()'s shared one): raw mode is a property of the statement object.
  const st = db.prepare<[number], unknown[]>(SQL_DIGEST_ROW).raw(true);
  return (digestId) => {
    const c = st.get(digestId);
    if (c === undefined) return undefined;
    return {
      id: c[0] as number,
      subscriber_id: c[1] as number,
      edition: c[2] as string,
      status: c[3] as DigestStatus,
      from_paper: c[4] as number,
      to_paper: c[5] as number,
      attempts: c[6] as number,
      items: c[7] as Buffer | null,
      topic_ids: c[8] as string,
      verp_nonce: c[9] as number | null,
      email: c[10] as string,
      subscriber_status: c[11] as SubscriberStatus,
      token_salt: c[12] as string,
      max_papers: c[13] as number | null,
      topics: c[14] as string,
      suggestions: c[15] as string,
    };
  };
}
