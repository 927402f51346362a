// The ledger a send run records its outcomes in: the SQLite engine (ledger/states.ts), given the writes a
// delivery or a hard failure makes on the subscriber's row (subscribers/records/repo.ts). Another engine plugs in here.
import type { Db } from '../db/open.ts';
import { SqliteLedger, type SendLedger, type SubscriberMarks } from '../ledger/index.ts';
import { advanceWatermark, countDeliveryFailure } from '../subscribers/records/repo.ts';

export const SUBSCRIBER_MARKS: SubscriberMarks = { advanceWatermark, countDeliveryFailure };

/** The run's ledger on this connection, its claims recorded for `claimant` (default: this process). */
export function openSendLedger(db: Db, claimant?: string): SendLedger {
  return new SqliteLedger(db, SUBSCRIBER_MARKS, claimant);
}
