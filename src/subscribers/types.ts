// What the subscriber service takes and returns (re-exported by service.ts). What it returns of a
// subscriber or a topic is a narrow view of the one Subscriber and Topic types (src/types.ts).
import type { Frequency, Subscriber, SubscriberStatus, Topic } from '../types.ts';

export interface SubscribeInput {
  email: string;
  topics: string[];
  timezone?: string;
  deliveryHour?: number;
  /** "daily" | "weekly"; validated. */
  frequency?: Frequency | string;
}

export interface SubscribeOptions {
  /** Admin paths (CLI, CSV import): confirmed at once; an existing subscriber's topics are replaced. */
  confirmed?: boolean;
  /** Default: true unless `confirmed`. */
  sendEmail?: boolean;
  /** Web: false, so the answer takes the same time whatever the address; failures are logged. Default true. */
  waitForEmail?: boolean;
}

export type SubscribeOutcome =
  | 'created' // new address, pending
  | 'updated' // was pending: topics and preferences replaced
  | 'resubscribe-requested' // was unsubscribed: the request waits for the emailed link, the row stays unsubscribed
  | 'opted-out' // complained, bounced or suppressed (or its row deleted after that): nothing written or mailed
  | 'already-confirmed' // nothing changed
  | 'confirmed'; // admin path: confirmed now (new or existing)

export interface SubscribeResult {
  /** Undefined when nothing was written (an opted-out address whose row was deleted). */
  subscriberId: number | undefined;
  /** The address as stored (trimmed, domain lower-cased). */
  email: string;
  outcome: SubscribeOutcome;
  status: SubscriberStatus;
  /** 'throttled': the address's limits (3 a day, none while one of the last hour is live); 'queued': stored, sending in the background. */
  emailState: 'sent' | 'queued' | 'throttled' | 'none';
}

export type TopicView = Pick<Topic, 'id' | 'text' | 'muted'>;

export interface PreferencesView extends Pick<Subscriber, 'email' | 'status' | 'timezone' | 'deliveryHour' | 'frequency' | 'weeklyDay'> {
  /** ISO time, or null when not paused (a pause in the past counts as not paused). */
  pausedUntil: string | null;
  topics: TopicView[];
  unsubscribeUrl: string;
  preferencesUrl: string;
  /** The reader's own cap on papers per email (null: none). */
  maxPapers: number | null;
  /** "You may also like" suggestions on. */
  suggestions: boolean;
  /** Only the papers the reader's model rates well (once they have voted). */
  modelOnly: boolean;
  /** The personal Atom feed (signed). */
  feedUrl: string;
  /** What the last delivery slot did ("why no email today"), in words; '' before any slot. */
  lastSlot: string;
}

export interface PreferencesInput {
  /** The whole new list (strings keep a kept topic's mute state). Undefined keeps the topics. */
  topics?: Array<string | { text: string; muted?: boolean }>;
  timezone?: string;
  deliveryHour?: number;
  frequency?: Frequency | string;
  weeklyDay?: number;
  /** 0 resumes deliveries; N pauses them for N days from now; undefined keeps the current pause. */
  pauseDays?: number;
  /** Most papers per email: 0 removes the cap; undefined keeps it. */
  maxPapers?: number;
  /** "You may also like" on or off; undefined keeps it. */
  suggestions?: boolean;
  /** "Only the papers my model rates well" on or off; undefined keeps it. */
  modelOnly?: boolean;
}

export interface SubscriberListing
  extends Pick<
    Subscriber,
    'id' | 'email' | 'status' | 'timezone' | 'deliveryHour' | 'frequency' | 'weeklyDay' | 'pausedUntil' | 'hardFailures' | 'createdAt' | 'confirmedAt'
  > {
  topics: TopicView[];
}

export interface MuteView {
  email: string;
  topic: TopicView;
  preferencesUrl: string;
}
