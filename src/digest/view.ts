// Turns one ledger row into what the renderer needs (DigestView): the subscriber's address, the
// edition, the papers in the row's display order with the topics that matched each, and the links.
// Used by the sender and by the web view page. Papers come in one query per digest (json_each).
import type { Db } from '../db/open.ts';
import type { Links } from '../links.ts';
import type { DigestItem, DigestStatus, SubscriberStatus } from '../types.ts';
import type { DigestPaperView, DigestView } from './render.ts';

export interface DigestRecord {
  id: number;
  subscriberId: number;
  edition: string;
  status: DigestStatus;
  fromPaper: number;
  toPaper: number;
  attempts: number;
  items: DigestItem[];
}

export interface DigestRecipient {
  id: number;
  email: string;
  status: SubscriberStatus;
  tokenSalt: string;
}

export interface LoadedDigest {
  row: DigestRecord;
  subscriber: DigestRecipient;
  view: DigestView;
}

/** The row with its subscriber. */
const SQL_DIGEST_ROW = `
  SELECT d.id, d.subscriber_id, d.edition, d.status, d.from_paper, d.to_paper, d.attempts, d.papers,
         s.email, s.status AS subscriber_status, s.token_salt
  FROM digests d
  JOIN subscribers s ON s.id = d.subscriber_id
  WHERE d.id = ?`;

/** The papers of a row, in the row's order (json_each keeps array order in `key`). */
const SQL_DIGEST_PAPERS = `
  SELECT j.key AS position, p.id, p.title, p.abstract, p.authors, p.url, p.published_at, p.upvotes, p.categories
  FROM json_each(?) j
  JOIN papers p ON p.id = json_extract(j.value, '$.p')
  ORDER BY j.key`;

/** Topic texts of the subscriber (to name the matched topics and build their mute links). */
const SQL_SUBSCRIBER_TOPICS = `SELECT id, text FROM topics WHERE subscriber_id = ?`;

interface RowSql {
  id: number;
  subscriber_id: number;
  edition: string;
  status: DigestStatus;
  from_paper: number;
  to_paper: number;
  attempts: number;
  papers: string;
  email: string;
  subscriber_status: SubscriberStatus;
  token_salt: string;
}

interface PaperSql {
  position: number;
  id: number;
  title: string;
  abstract: string;
  authors: string;
  url: string;
  published_at: string | null;
  upvotes: number;
  categories: string;
}

type Statements = ReturnType<typeof prepare>;
const statementCache = new WeakMap<Db, Statements>();

function prepare(db: Db) {
  return {
    row: db.prepare(SQL_DIGEST_ROW),
    papers: db.prepare(SQL_DIGEST_PAPERS),
    topics: db.prepare(SQL_SUBSCRIBER_TOPICS),
  };
}

function statements(db: Db): Statements {
  let s = statementCache.get(db);
  if (!s) {
    s = prepare(db);
    statementCache.set(db, s);
  }
  return s;
}

/** The ledger row, its subscriber and the renderer's input; undefined when there is no such row. */
export function loadDigest(db: Db, digestId: number, links: Links): LoadedDigest | undefined {
  const st = statements(db);
  const r = st.row.get(digestId) as RowSql | undefined;
  if (!r) return undefined;
  const items = JSON.parse(r.papers) as DigestItem[];
  const subscriber: DigestRecipient = { id: r.subscriber_id, email: r.email, status: r.subscriber_status, tokenSalt: r.token_salt };
  const topicText = new Map<number, string>();
  for (const t of st.topics.all(r.subscriber_id) as { id: number; text: string }[]) topicText.set(t.id, t.text);

  const papers: DigestPaperView[] = [];
  for (const p of st.papers.all(r.papers) as PaperSql[]) {
    const item = items[p.position];
    const matchedTopics = (item?.t ?? [])
      .filter((topicId) => topicText.has(topicId)) // a topic deleted since planning is not named
      .map((topicId) => ({ text: topicText.get(topicId)!, muteUrl: links.mute(subscriber, topicId) }));
    papers.push({
      title: p.title,
      url: p.url,
      authors: parseStringArray(p.authors),
      abstract: p.abstract,
      upvotes: p.upvotes,
      categories: parseStringArray(p.categories),
      publishedAt: p.published_at,
      matchedTopics,
    });
  }

  const view: DigestView = {
    email: r.email,
    edition: r.edition,
    papers,
    links: {
      preferences: links.preferences(subscriber),
      unsubscribe: links.unsubscribe(subscriber),
      webView: links.webView(subscriber, r.id),
      home: links.home(),
    },
  };
  const row: DigestRecord = {
    id: r.id,
    subscriberId: r.subscriber_id,
    edition: r.edition,
    status: r.status,
    fromPaper: r.from_paper,
    toPaper: r.to_paper,
    attempts: r.attempts,
    items,
  };
  return { row, subscriber, view };
}

/** The renderer's input for one ledger row (web view page, preview). */
export function loadDigestView(db: Db, digestId: number, links: Links): DigestView | undefined {
  return loadDigest(db, digestId, links)?.view;
}

function parseStringArray(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
