// The digest loader signs one link token per digest (src/render/view.ts): the web view link and every
// feedback and follow link of the digest, suggestions included, carry the same view:<digestId> token.
// Real SQLite file; the tokens are real, only counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { Links } from '../../src/links.ts';
import { encodeItems } from '../../src/ledger/items.ts';
import { DigestLoader } from '../../src/render/view.ts';
import { Tokens, type TokenPurpose, type TokenSubject } from '../../src/tokens.ts';
import { seedBatch, seedSubscriber, tempDatabase, type TempDb } from '../helpers/seed.ts';

const BASE = 'https://digest.example.org';

/** Real tokens that remember every purpose they signed. */
class CountingTokens extends Tokens {
  readonly signed: TokenPurpose[] = [];
  override sign(subject: TokenSubject, purpose: TokenPurpose, expiresAt?: Date): string {
    this.signed.push(purpose);
    return super.sign(subject, purpose, expiresAt);
  }
}

let t: TempDb;
let digestId: number;
let paperIds: number[];

beforeAll(() => {
  t = tempDatabase();
  ({ paperIds } = seedBatch(
    t.db,
    '2025-11-25',
    Array.from({ length: 6 }, (_, i) => ({ title: `Paper ${i}`, authors: [`Author ${i}`, 'Someone Else'] })),
  ));
  const s = seedSubscriber(t.db, { email: 'reader@example.org', topics: ['paper'] });
  // Papers 0-3 listed, paper 4 suggested ("you may also like"), paper 5 in neither.
  const items = encodeItems(paperIds.slice(0, 4).map((paperId) => ({ paperId, topicBits: [0] })), 0);
  digestId = Number(
    t.db
      .prepare(
        `INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at)
         VALUES (?, '2025-11-25', 'sent', 0, ?, ?, ?, 4, ?)`,
      )
      .run(s.id, paperIds.at(-1), String(s.topicIds[0]), items, new Date().toISOString()).lastInsertRowid,
  );
  t.db.prepare('INSERT INTO digest_suggestions (digest_id, paper_id, score) VALUES (?, ?, 1)').run(digestId, paperIds[4]);
});
afterAll(() => t.cleanup());

describe('one feedback token per digest', () => {
  it('signs the view token once and puts it in every feedback and follow link; the web view link has a read-only token', () => {
    const tokens = new CountingTokens('x'.repeat(40));
    const loader = new DigestLoader(t.db, new Links(BASE, tokens, systemClock));
    const { view } = loader.load(digestId)!;
    const shown = [...view.papers, ...(view.suggestions ?? [])];
    expect(shown).toHaveLength(5);
    const urls = shown.flatMap((p) => [p.feedback!.more, p.feedback!.less, p.feedback!.follow!.url]);

    const readToken = view.links.webView.slice(`${BASE}/digests/`.length);
    expect(tokens.peek(readToken)?.purpose).toBe(`read:${digestId}`);
    const inLinks = urls.map((u) => /^https:\/\/digest\.example\.org\/(?:feedback|follow)\/([^/]+)\//.exec(u)![1]);
    expect(new Set(inLinks).size).toBe(1);
    const token = inLinks[0]!;
    expect(tokens.peek(token)?.purpose).toBe(`view:${digestId}`);
    // The URL shapes are unchanged; only the token in them is the digest's.
    expect(view.papers[0]!.feedback!.more).toBe(`${BASE}/feedback/${token}/${paperIds[0]}/more`);
    expect(view.suggestions![0]!.feedback!.follow!.url).toBe(`${BASE}/follow/${token}/0/${paperIds[4]}`);

    // One HMAC for the digest's links to papers, however many papers it shows; none per paper.
    expect(tokens.signed.filter((p) => p.startsWith('view:'))).toEqual([`view:${digestId}`]);
    expect(tokens.signed.filter((p) => p.startsWith('read:'))).toEqual([`read:${digestId}`]);
    expect(tokens.signed.filter((p) => p.startsWith('paper:'))).toEqual([]);
  });
});

describe('links the renderer need not check again', () => {
  it('marks feedback links canonical only under a canonical PUBLIC_URL, and a renderer reads either kind the same', async () => {
    const { createRenderer } = await import('../../src/render/render.ts');
    const renderer = await createRenderer();
    const tokens = new Tokens('x'.repeat(40));
    for (const [base, canonical] of [
      [BASE, true],
      ['http://localhost:8080', true], // a port: safeHref parses such links, and gives them back as they are
      ['https://Digest.Example.org', false], // URL would lower-case the host: the renderer must see it done
    ] as const) {
      const { view } = new DigestLoader(t.db, new Links(base, tokens, systemClock)).load(digestId)!;
      expect(view.papers[0]!.feedback!.canonical).toBe(canonical);
      const email = renderer.digest(view);
      const more = new URL(view.papers[0]!.feedback!.more).href;
      expect(email.html).toContain(`href="${more}"`);
      expect(email.text).toContain(more);
      email.release?.();
    }
  });
});

describe('suggestions', () => {
  it('shows the best three, highest score first and the lower paper id on a tie, however the rows are stored', () => {
    const local = tempDatabase();
    try {
      const { paperIds: ids } = seedBatch(local.db, '2025-11-25', Array.from({ length: 6 }, (_, i) => ({ title: `Paper ${i}` })));
      const s = seedSubscriber(local.db, { email: 'ordered@example.org', topics: ['paper'] });
      const id = Number(
        local.db
          .prepare(
            `INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at)
             VALUES (?, '2025-11-25', 'planned', 0, ?, ?, ?, 1, ?)`,
          )
          .run(s.id, ids.at(-1), String(s.topicIds[0]), encodeItems([{ paperId: ids[0]!, topicBits: [0] }], 0), new Date().toISOString()).lastInsertRowid,
      );
      // Stored in an order that is neither by score nor by id; ids[2] and ids[4] tie.
      const insert = local.db.prepare('INSERT INTO digest_suggestions (digest_id, paper_id, score) VALUES (?, ?, ?)');
      for (const [paper, score] of [[ids[5]!, 0.5], [ids[4]!, 2.25], [ids[1]!, 0.75], [ids[2]!, 2.25], [ids[3]!, 3]] as const) insert.run(id, paper, score);
      const view = new DigestLoader(local.db, new Links(BASE, new Tokens('x'.repeat(40)), systemClock)).load(id)!.view;
      expect(view.suggestions!.map((p) => p.title)).toEqual(['Paper 3', 'Paper 2', 'Paper 4']);
    } finally {
      local.cleanup();
    }
  });
});
