// What the `digest` commands call (src/cli-commands.ts, src/cli-consent.ts): ingest a batch, the
// operator figures and the ledger by edition, the sources, one subscriber's last slot and consent
// history, the preview. (The roster and consent actions are roster.ts, on either engine.) Made once in the composition root
// (src/main.ts); the commands hold no database handle.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { consentHistory, type ConsentEvent } from '../consent/history.ts';
import type { Db } from '../db/open.ts';
import { hasAnyBatch, ingestBatch, type IngestResult } from '../ingest/ingest.ts';
import { listSources, parseSources, type SourceListing } from '../ingest/sources.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { lastNoticeFailures, noticesOf, type Notice } from '../notices/repo.ts';
import { previewDigest } from '../render/preview.ts';
import type { Renderer, RenderedEmail } from '../render/render.ts';
import { operatorFigures, recentWindows, type OperatorFigures } from '../report/figures.ts';
import { editionStatus, type EditionStatus } from '../report/status.ts';
import { lastSlotReport, type LastSlotReport } from '../report/why-no-email.ts';
import type { IncomingBatch } from '../types.ts';

export interface OperatorDeps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  links: Links;
  renderer: Renderer;
}

export interface OperatorService {
  /** One batch, whole or nothing (a batch seen before changes nothing). */
  ingest(batch: IncomingBatch): IngestResult;
  /** Whether any batch was ever ingested (the sample data is offered on a fresh database). */
  hasAnyBatch(): boolean;
  /** `digest status`: overdue now, bounces and opt-outs of 30 days, confirmation emails of 24 hours. */
  figures(): OperatorFigures;
  /** The most recent editions by state, with their top failure reasons. */
  editions(limit: number): EditionStatus[];
  /** Each configured source (SOURCES) with its last day and errors. */
  sources(): SourceListing[];
  /** What a subscriber's last slot did, and why it sent nothing when it did not. */
  lastSlot(subscriberId: number): LastSlotReport | undefined;
  /** The last confirmation email to a subscriber. */
  lastNotice(subscriberId: number): Notice | undefined;
  /** The last confirmation email that failed or waits for a retry. */
  lastNoticeFailure(): Notice | undefined;
  /** An address's opt-out history, newest first (kept after its subscriber is deleted). */
  consentHistory(email: string, limit: number): ConsentEvent[];
  /** The digest that would be sent to this address now (nothing is written). */
  preview(email: string): Promise<RenderedEmail | undefined>;
}

export function createOperatorService(deps: OperatorDeps): OperatorService {
  const { db, clock, config } = deps;
  return {
    ingest: (batch) => ingestBatch(db, batch, clock),
    hasAnyBatch: () => hasAnyBatch(db),
    figures: () => operatorFigures(db, clock, recentWindows(clock)),
    editions: (limit) => editionStatus(db, { limit }),
    sources: () => listSources(db, parseSources(config.SOURCES)),
    lastSlot: (subscriberId) => lastSlotReport(db, subscriberId, clock.now()),
    lastNotice: (subscriberId) => noticesOf(db, subscriberId, 1)[0],
    lastNoticeFailure: () => lastNoticeFailures(db, 1)[0],
    consentHistory: (email, limit) => consentHistory(db, email, limit),
    preview: (email) => previewDigest(deps, email),
  };
}
