// CPU per digest of each step the sender runs, measured one step at a time on a sample of the
// planned rows, in this thread: load (ledger row, subscriber, papers, signed links), render (the
// precompiled templates) and build (the raw MIME message). Sending itself is the rest of the send stage.
import { performance } from 'node:perf_hooks';
import type { Db } from '../src/db/open.ts';
import type { Renderer } from '../src/render/render.ts';
import { DigestLoader } from '../src/render/view.ts';
import type { Links } from '../src/links.ts';
import { createMessageBuilder } from '../src/mail/raw-message.ts';

export interface PerDigestCost {
  digests: number;
  loadMs: number;
  renderMs: number;
  buildMs: number;
  /** Mean size of the built messages (bytes). */
  messageBytes: number;
  /** Each sampled digest's message size (to pick the ceiling's message). */
  sizes: Array<{ id: number; bytes: number }>;
  /** Papers shown in full / as compact lines, per digest on average. */
  fullPapers: number;
  compactPapers: number;
}

// Evenly spread sample of ledger rows.
const SELECT_SAMPLE_IDS = `SELECT id FROM digests WHERE id % @step = 0 ORDER BY id LIMIT @limit`;
const COUNT_DIGESTS = `SELECT count(*) AS n FROM digests`;

export function measurePerDigest(
  deps: { db: Db; links: Links; renderer: Pick<Renderer, 'digest' | 'emailPapers'>; from: string },
  sample: number,
): PerDigestCost {
  const { db } = deps;
  const total = (db.prepare(COUNT_DIGESTS).get() as { n: number }).n;
  const step = Math.max(1, Math.floor(total / sample));
  const ids = (db.prepare(SELECT_SAMPLE_IDS).all({ step, limit: sample }) as { id: number }[]).map((r) => r.id);
  const loader = new DigestLoader(db, deps.links);
  const builder = createMessageBuilder({ from: deps.from });
  let loadMs = 0;
  let renderMs = 0;
  let buildMs = 0;
  let bytes = 0;
  let n = 0;
  let full = 0;
  let compact = 0;
  const sizes: Array<{ id: number; bytes: number }> = [];
  const now = new Date();
  for (const id of ids) {
    const t0 = performance.now();
    const loaded = loader.load(id, { papers: deps.renderer.emailPapers });
    const t1 = performance.now();
    if (!loaded) continue;
    const mail = deps.renderer.digest(loaded.view);
    const t2 = performance.now();
    const built = builder.build(
      {
        to: loaded.subscriber.email,
        subject: mail.subject,
        // The bodies come encoded (per-run card bytes); html/text would be decoded if read, so not passed.
        html: '',
        text: '',
        encoded: mail.encoded,
        listUnsubscribe: { url: loaded.view.links.unsubscribe },
      },
      `bench-${id}@bench.example`,
      now,
    );
    const t3 = performance.now();
    // As the send loop does once the relay has the message: the email's scratch goes back to the renderer.
    mail.release?.();
    loadMs += t1 - t0;
    renderMs += t2 - t1;
    buildMs += t3 - t2;
    bytes += built.raw.length;
    sizes.push({ id, bytes: built.raw.length });
    full += mail.fullPapers ?? mail.shownPapers;
    compact += mail.shownPapers - (mail.fullPapers ?? mail.shownPapers);
    n++;
  }
  const per = (ms: number) => (n > 0 ? ms / n : 0);
  return {
    digests: n,
    loadMs: per(loadMs),
    renderMs: per(renderMs),
    buildMs: per(buildMs),
    messageBytes: n > 0 ? bytes / n : 0,
    sizes,
    fullPapers: per(full),
    compactPapers: per(compact),
  };
}
