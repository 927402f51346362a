// The operator's consent and roster actions, one port for the console and the `digest` commands: find
// subscribers, read one, subscribe (--confirmed), resend a confirmation, suppress, unsubscribe, delete,
// list and lift opt-outs, import a CSV. Promise-returning, with one adapter per engine: SQLite's (below,
// today's synchronous code answered at once) and PostgreSQL's (postgres/roster.ts), so an operator's
// decision is recorded where the senders look. Both follow the same rules (subscribers/consent-rules.ts,
// consent/lift.ts).
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { listOptOuts, type OptOutListing } from '../consent/history.ts';
import { liftOptOut, type LiftResult } from '../consent/lift.ts';
import type { Db } from '../db/open.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { importSubscribersCsv, type ImportResult } from '../subscribers/import.ts';
import { importInThread } from '../subscribers/import-thread.ts';
import type { SubscriberService } from '../subscribers/service.ts';
import type { SubscribeInput, SubscribeResult, SubscriberListing } from '../subscribers/types.ts';
import {
  deleteSubscriber,
  searchSubscribers,
  subscriberDetail,
  suppressSubscriber,
  unsubscribeSubscriber,
  type SearchPage,
  type SubscriberDetail,
} from '../admin/subscribers.ts';

export type SearchQuery = { by: 'address' | 'topic'; text: string; after?: string | undefined };

export interface OperatorRoster {
  /** Which store it acts on. */
  readonly engine: 'sqlite' | 'postgres';
  search(q: SearchQuery): Promise<SearchPage>;
  detail(id: number): Promise<SubscriberDetail | undefined>;
  /** Every subscriber with its topics, oldest first, a page at a time (`digest subscribers`). */
  list(): AsyncIterable<SubscriberListing>;
  /** `digest subscribe`: pending with a confirmation email, or `confirmed` (refused for an address with an opt-out). */
  subscribe(input: SubscribeInput, options: { confirmed: boolean }): Promise<SubscribeResult>;
  /** Pending addresses only, within the per-address limits. */
  resendConfirmation(id: number): Promise<SubscribeResult['emailState']>;
  /** False when it did not apply (unknown id, already in that state). */
  suppress(id: number): Promise<boolean>;
  unsubscribe(id: number): Promise<boolean>;
  /** The subscriber and all their data; the opt-out history stays, kept by address. */
  remove(id: number): Promise<boolean>;
  /** Addresses whose latest consent event is an opt-out, newest first (keyset: `before` an event id). */
  optOuts(q: { limit: number; before?: number | undefined }): Promise<OptOutListing[]>;
  /** Lifts an address's opt-outs with a reason kept in its history (throws a 4xx AppError otherwise). */
  lift(email: string, reason: string): Promise<LiftResult>;
  /** The whole file checked first (nothing written on a bad row); never mails, never revives an opt-out. */
  importCsv(path: string, options?: { name?: string | undefined; offThread?: boolean }): Promise<ImportResult>;
}

export interface SqliteRosterDeps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  links: Links;
  subscribers: SubscriberService;
}

export function sqliteRoster(deps: SqliteRosterDeps): OperatorRoster {
  const { db, clock, config, logger, links, subscribers } = deps;
  return {
    engine: 'sqlite',
    search: async (q) => searchSubscribers(db, q),
    detail: async (id) => subscriberDetail(db, links, id),
    list: async function* () {
      yield* subscribers.list();
    },
    subscribe: (input, o) => subscribers.subscribe(input, { confirmed: o.confirmed, sendEmail: !o.confirmed }),
    resendConfirmation: (id) => subscribers.resendConfirmation(id),
    suppress: async (id) => suppressSubscriber(db, clock, id),
    unsubscribe: async (id) => unsubscribeSubscriber(db, clock, id),
    remove: async (id) => deleteSubscriber(db, id),
    optOuts: async (q) => listOptOuts(db, q),
    lift: async (email, reason) => liftOptOut(db, clock, email, reason),
    // The console's import runs in a worker thread when the database is a file (off the web's event loop).
    importCsv: (path, o = {}) =>
      o.offThread && !db.memory
        ? importInThread({ databasePath: db.name, clock, config }, path, o.name ?? path)
        : importSubscribersCsv({ db, clock, logger, config }, path, { name: o.name }),
  };
}
