// The "view in browser" link of one digest (GET /digests/:token): the signed token names a subscriber
// and a digest; both must still agree with the ledger row, else the digest is gone (404). A port with one
// adapter per engine (as the subscriber door, door.ts): SQLite's below; PostgreSQL's postgres/open-digest.ts.
import type { Db } from '../db/open.ts';
import { AppError } from '../errors.ts';
import type { Links } from '../links.ts';
import type { DigestView } from '../render/render.ts';
import { loadDigest, type LoadedDigest } from '../render/view.ts';
import { eitherStore } from './records/link-tokens.ts';
import type { SubscriberService } from './service.ts';

export interface DigestViews {
  readonly engine: 'sqlite' | 'postgres';
  /** The renderer's input for the digest a view link names; AppError DIGEST_GONE (404) when it is not there any more. */
  open(token: string): Promise<DigestView>;
}

export interface OpenDigestDeps {
  db: Db;
  links: Links;
  subscribers: Pick<SubscriberService, 'resolveDigestLink'>;
}

export function sqliteDigestViews(deps: OpenDigestDeps): DigestViews {
  return { engine: 'sqlite', open: async (token) => openDigest(deps, token) };
}

/** During a move to PostgreSQL (door.ts doorWithFallback): a link the primary store did not sign is answered by the earlier one. */
export function digestViewsWithFallback(primary: DigestViews, earlier: DigestViews, signedHere: (token: string) => Promise<boolean>): DigestViews {
  const either = eitherStore(signedHere);
  return { engine: primary.engine, open: (t) => either(t, () => primary.open(t), () => earlier.open(t)) };
}

/** The renderer's input for the digest a view link names; AppError DIGEST_GONE (404) when it is not there any more. */
export function openDigest(deps: OpenDigestDeps, token: string): DigestView {
  const { subscriberId, digestId } = deps.subscribers.resolveDigestLink(token);
  return viewOf(loadDigest(deps.db, digestId, deps.links), subscriberId);
}

/** The loaded row's view when it is still the link's reader's digest (either engine). */
export function viewOf(loaded: LoadedDigest | undefined, subscriberId: number): DigestView {
  if (!loaded || loaded.row.subscriberId !== subscriberId) {
    throw new AppError('DIGEST_GONE', 'This digest is no longer available.');
  }
  return loaded.view;
}
