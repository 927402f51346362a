// The "view in browser" link of one digest (GET /digests/:token): the signed token names a subscriber
// and a digest; both must still agree with the ledger row, else the digest is gone (404).
import type { Db } from '../db/open.ts';
import { AppError } from '../errors.ts';
import type { Links } from '../links.ts';
import type { DigestView } from '../render/render.ts';
import { loadDigest } from '../render/view.ts';
import type { SubscriberService } from './service.ts';

export interface OpenDigestDeps {
  db: Db;
  links: Links;
  subscribers: Pick<SubscriberService, 'resolveDigestLink'>;
}

/** The renderer's input for the digest a view link names; AppError DIGEST_GONE (404) when it is not there any more. */
export function openDigest(deps: OpenDigestDeps, token: string): DigestView {
  const { subscriberId, digestId } = deps.subscribers.resolveDigestLink(token);
  const loaded = loadDigest(deps.db, digestId, deps.links);
  if (!loaded || loaded.row.subscriberId !== subscriberId) {
    throw new AppError('DIGEST_GONE', 'This digest is no longer available.');
  }
  return loaded.view;
}
