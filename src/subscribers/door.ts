// The subscriber door: what the web routes call to subscribe, confirm, unsubscribe and manage, as a port
// of Promise-returning methods with one adapter per engine. SQLite's (below) is the synchronous service
// answered at once; PostgreSQL's is postgres/door.ts. Both follow consent-rules.ts and give every address
// the same answers.
import type { ConfirmResult } from './subscription.ts';
import type { SubscriberService } from './service.ts';
import type { MuteView, PreferencesInput, PreferencesView, SubscribeInput, SubscribeOptions, SubscribeResult } from './types.ts';
import type { SubscriberStatus } from '../types.ts';
import { eitherStore, foreignLink } from './records/link-tokens.ts';

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
  /** Whether the token's signature holds for a subscriber of this store (whatever its purpose or expiry). */
  signedHere?(token: string): Promise<boolean>;
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

/**
 * The door of a deployment moving to another store: new requests go to `primary`; a link that store does
 * not know (signed for a subscriber of `earlier`: emails sent before the move, or by a stage still on it)
 * is answered by `earlier`, so no emailed link stops working. Unsubscribe acts on every store where the
 * link verifies (a copied deployment has the same subscriber in both): an opt-out is never lost.
 */
export function doorWithFallback(primary: SubscriberDoor, earlier: SubscriberDoor): SubscriberDoor {
  const signedHere = async (token: string) => (await primary.signedHere?.(token)) === true;
  const notOurs = async (e: unknown, token: string) => foreignLink(e) && !(await signedHere(token));
  const either = eitherStore(signedHere);
  return {
    engine: primary.engine,
    subscribe: (input, options) => primary.subscribe(input, options),
    prepareExamples: (items) => primary.prepareExamples(items),
    confirm: (t) => either(t, () => primary.confirm(t), () => earlier.confirm(t)),
    describeUnsubscribe: (t) => either(t, () => primary.describeUnsubscribe(t), () => earlier.describeUnsubscribe(t)),
    unsubscribe: async (t) => {
      const [a, b] = await Promise.allSettled([primary.unsubscribe(t), earlier.unsubscribe(t)]);
      // The primary store failing (not just not knowing the link) is answered as its error: retried, never half done.
      if (a.status === 'rejected' && !(await notOurs(a.reason, t))) throw a.reason;
      const done = [a, b].flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      if (done.length === 0) throw (b as PromiseRejectedResult).reason;
      return { email: done[0]!.email, changed: done.some((r) => r.changed) };
    },
    getPreferences: (t) => either(t, () => primary.getPreferences(t), () => earlier.getPreferences(t)),
    updatePreferences: (t, input) => either(t, () => primary.updatePreferences(t, input), () => earlier.updatePreferences(t, input)),
    describeMute: (t, id) => either(t, () => primary.describeMute(t, id), () => earlier.describeMute(t, id)),
    muteByToken: (t, id) => either(t, () => primary.muteByToken(t, id), () => earlier.muteByToken(t, id)),
  };
}
