// The subscriber door on PostgreSQL (DATABASE_URL=postgres://…): subscription.ts and manage.ts behind the
// SubscriberDoor port, with confirmation emails claimed and settled in PostgreSQL's notices table by the
// one notice sender (notices/sender.ts over notices/postgres-store.ts). Every method answers a lost
// database as a temporary DB_FAULT (503).
import type pg from 'pg';
import type { Config } from '../../config.ts';
import type { Mailer } from '../../mail/types.ts';
import { postgresNoticeStore } from '../../notices/postgres-store.ts';
import { createNoticeSender, type NoticeSender } from '../../notices/sender.ts';
import type { Renderer } from '../../render/render.ts';
import type { RetrySettings } from '../../send/retry-policy.ts';
import type { SubscriberDoor } from '../door.ts';
import type { SubscribeResult } from '../types.ts';
import { answerDbLoss, signedByPg, type PgDoorDeps } from './common.ts';
import { PgManage } from './manage.ts';
import { PgSubscription, prepareExamplesPg } from './subscription.ts';

export interface PostgresDoorDeps extends PgDoorDeps {
  pool: pg.Pool;
  mailer: Mailer;
  renderer: Pick<Renderer, 'confirm'>;
  config: Pick<Config, 'DIGEST_TZ' | 'DIGEST_HOUR'> & RetrySettings;
}

export type PostgresDoor = SubscriberDoor & {
  /** Sends PostgreSQL's waiting confirmation emails (`digest serve` kicks it at start). */
  notices: NoticeSender;
  /** The console's "resend the confirmation" (pending addresses only, within the per-address limits). */
  resendConfirmation(subscriberId: number): Promise<SubscribeResult['emailState']>;
};

export function createPostgresDoor(deps: PostgresDoorDeps): PostgresDoor {
  const { pool, clock, mailer, renderer, links, logger, config } = deps;
  const notices = createNoticeSender({ store: postgresNoticeStore(pool), clock, mailer, renderer, links, logger, config });
  const subscription = new PgSubscription({ ...deps, notices });
  const manage = new PgManage(deps);
  return {
    engine: 'postgres',
    notices,
    subscribe: (input, options) => answerDbLoss(() => subscription.subscribe(input, options)),
    confirm: (token) => answerDbLoss(() => subscription.confirm(token)),
    describeUnsubscribe: (token) => answerDbLoss(() => manage.describeUnsubscribe(token)),
    unsubscribe: (token) => answerDbLoss(() => manage.unsubscribe(token)),
    getPreferences: (token) => answerDbLoss(() => manage.getPreferences(token)),
    prepareExamples: (items) => answerDbLoss(() => prepareExamplesPg(deps, items)),
    updatePreferences: (token, input) => answerDbLoss(() => manage.updatePreferences(token, input)),
    describeMute: (token, topicId) => answerDbLoss(() => manage.describeMute(token, topicId)),
    muteByToken: (token, topicId) => answerDbLoss(() => manage.muteByToken(token, topicId)),
    signedHere: (token) => answerDbLoss(() => signedByPg(pool, deps, token)),
    resendConfirmation: (id) => answerDbLoss(() => subscription.resendConfirmation(id)),
  };
}
