// The subscriber door: what the web routes call to subscribe, confirm, unsubscribe and manage, as a port
// of Promise-returning methods with one adapter per engine. SQLite's (below) is the synchronous service
// answered at once; PostgreSQL's is postgres/door.ts. Both follow consent-rules.ts and give every address
// the same answers.
import type { ConfirmResult } from './subscription.ts';
import type { SubscriberService } from './service.ts';
import type { MuteView, PreferencesInput, PreferencesView, SubscribeInput, SubscribeOptions, SubscribeResult } from './types.ts';
import type { SubscriberStatus } from '../types.ts';

export type { ConfirmResult };

export interface SubscriberDoor {
  /** Which store answers (health lines, logs). */
  readonly engine: 'sqlite' | 'postgres';
  subscribe(input: SubscribeInput, options?: SubscribeOptions): Promise<SubscribeResult>;
  confirm(token: string): Promise<ConfirmResult>;
  describeUnsubscribe(token: string): Promise<{ email: string; status: SubscriberStatus; preferencesUrl: string }>;
  unsubscribe(token: string): Promise<{ email: string; changed: boolean }>;
  getPreferences(token: string): Promise<PreferencesView>;
  /** Looks up like: examples the topics name (before any transaction). */
  prepareExamples(items: Array<string | { text: string }> | undefined): Promise<void>;
  updatePreferences(token: string, input: PreferencesInput): Promise<PreferencesView>;
  describeMute(token: string, topicId?: number): Promise<MuteView>;
  muteByToken(token: string, topicId?: number): Promise<MuteView>;
}

/** SQLite: the service as it is (synchronous inside, one microtask more per call). */
export function sqliteDoor(s: SubscriberService): SubscriberDoor {
  return {
    engine: 'sqlite',
    subscribe: (input, options) => s.subscribe(input, options),
    confirm: async (token) => s.confirm(token),
    describeUnsubscribe: async (token) => s.describeUnsubscribe(token),
    unsubscribe: async (token) => s.unsubscribe(token),
    getPreferences: async (token) => s.getPreferences(token),
    prepareExamples: (items) => s.prepareExamples(items),
    updatePreferences: async (token, input) => s.updatePreferences(token, input),
    describeMute: async (token, topicId) => s.describeMute(token, topicId),
    muteByToken: async (token, topicId) => s.muteByToken(token, topicId),
  };
}
