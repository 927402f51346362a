// The operator's roster and consent actions on PostgreSQL (DATABASE_URL=postgres://…): the OperatorRoster
// port (../roster.ts) over PostgreSQL's rows, where `digest worker`s read who to mail. Every change takes the
// address's advisory lock, as the door's writes do; the opt-out history's rows are written by PostgreSQL's
// trigger on the status, and a lift by consent/lift.ts's rules with its reason.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { checkLiftReason, liftApplies, type LiftResult } from '../../consent/lift.ts';
import { activeOptOuts, listOptOuts, recordConsentEvent } from '../../consent/postgres.ts';
import type { Links } from '../../links.ts';
import type { Logger } from '../../log.ts';
import { normaliseEmail } from '../../subscribers/records/email-address.ts';
import * as records from '../../subscribers/records/postgres.ts';
import type { SubscriberRecord } from '../../subscribers/records/repo.ts';
import { answerDbLoss, forAddress } from '../../subscribers/postgres/common.ts';
import type { PostgresDoor } from '../../subscribers/postgres/door.ts';
import { toListing } from '../../subscribers/views.ts';
import type { OperatorRoster } from '../roster.ts';
import { importCsvPg } from './import.ts';
import { searchSubscribersPg, subscriberDetailPg } from './reads.ts';

export interface PgRosterDeps {
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'DIGEST_TZ' | 'DIGEST_HOUR'>;
  /** PostgreSQL's subscriber door: subscribe and confirmation emails go through its rules and notices. */
  door: PostgresDoor;
  /** PostgreSQL's links (its secret): a subscriber's page links each sent digest's web view. */
  links: Links;
}

const LIST_PAGE = 500;

export function createPostgresRoster(deps: PgRosterDeps): OperatorRoster {
  const { pool, clock, door } = deps;
  const now = () => clock.now().toISOString();
  /** `fn` on the subscriber's row under its address's lock; false when there is no such subscriber. */
  const onSubscriber = (id: number, fn: (c: pg.PoolClient, s: SubscriberRecord) => Promise<boolean>) =>
    answerDbLoss(async () => {
      const found = await records.findSubscriberById(pool, id);
      if (!found) return false;
      return forAddress(pool, found.email, async (c) => {
        const s = await records.findSubscriberById(c, id);
        return s ? fn(c, s) : false;
      });
    });
  return {
    engine: 'postgres',
    search: (q) => answerDbLoss(() => searchSubscribersPg(pool, q)),
    detail: (id) => answerDbLoss(() => subscriberDetailPg(pool, deps.links, id)),
    list: async function* () {
      for (let page = await records.subscribersAfter(pool, 0, LIST_PAGE); page.length > 0; page = await records.subscribersAfter(pool, page[page.length - 1]!.id, LIST_PAGE)) {
        for (const s of page) yield toListing(s, await records.listTopics(pool, s.id));
      }
    },
    subscribe: (input, o) => door.subscribe(input, { confirmed: o.confirmed, sendEmail: !o.confirmed }),
    resendConfirmation: (id) => door.resendConfirmation(id),
    suppress: (id) => onSubscriber(id, (c, s) => records.markSuppressed(c, s.id, now(), { kind: 'operator', detail: 'suppressed from the console' })),
    unsubscribe: (id) => onSubscriber(id, (c, s) => records.markUnsubscribed(c, s.id, now(), { kind: 'unsubscribe', detail: 'by the operator (console)' })),
    remove: (id) => onSubscriber(id, (c, s) => records.deleteSubscriberRow(c, s.id)),
    optOuts: (q) => answerDbLoss(() => listOptOuts(pool, q)),
    lift: (email, reason) => answerDbLoss(() => liftPg(pool, now(), email, reason)),
    importCsv: (path, o = {}) => importCsvPg(deps, path, o.name ?? path),
  };
}

/** consent/lift.ts liftOptOut, on PostgreSQL: the reason in the history, the row back to confirmed or pending. */
async function liftPg(pool: pg.Pool, at: string, rawEmail: string, rawReason: string): Promise<LiftResult> {
  const email = normaliseEmail(rawEmail);
  const reason = checkLiftReason(rawReason);
  return forAddress(pool, email, async (c) => {
    const active = await activeOptOuts(c, email);
    const row = await records.findSubscriberByEmail(c, email);
    const left = liftApplies(email, row, active);
    await recordConsentEvent(c, { email, kind: 'lifted', status: null, detail: reason, at });
    let status = row?.status;
    if (row && left) {
      status = (await records.liftOptOutStatus(c, row.id)) ?? row.status;
      await records.deleteResubscribeRequest(c, row.id);
    }
    return { email: row?.email ?? email, lifted: active, status };
  });
}
