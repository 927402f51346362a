// GET /preferences/:token (the page) and POST /preferences/:token (form or JSON): topics (edit, add,
// remove, mute), pause for N days, daily or weekly, delivery hour and time zone. No account, no password:
// the signed link is the key.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { PreferencesInput, PreferencesView } from '../../subscribers/service.ts';
import {
  blankToUndefined,
  fieldError,
  fieldErrorJson,
  numberish,
  repeated,
  scheduleFields,
  toOptionalInt,
  topicErrorAt,
  weekdayOptions,
  type FieldError,
} from '../form-values.ts';
import { sendPage, wantsJson } from '../respond.ts';
import { fieldErrorBody, preferencesSaved } from '../response-schemas.ts';
import type { RouteDeps } from '../deps.ts';
import { tokenParams } from '../token-param.ts';

const BLANK_ROWS = 2;

const topicItem = z.union([z.string().max(2000), z.object({ text: z.string().max(2000), muted: z.boolean().optional() })]);

const preferencesBody = z.object({
  topics: z.union([z.string().max(2000), z.array(topicItem).max(100)]).optional(),
  /** Form checkboxes: indexes (into topics) of the rows to mute / remove. */
  mute: repeated,
  remove: repeated,
  timezone: z.string().max(200).optional(),
  deliveryHour: numberish,
  frequency: z.string().max(50).optional(),
  weeklyDay: numberish,
  pauseDays: numberish,
  maxPapers: numberish,
  /** Checkbox: present when checked; `learning` marks a form that shows it (unchecked = off). */
  suggestions: z.union([z.string().max(10), z.boolean()]).optional(),
  modelOnly: z.union([z.string().max(10), z.boolean()]).optional(),
  learning: z.string().max(5).optional(),
});
type PreferencesBody = z.infer<typeof preferencesBody>;

interface TopicRow {
  index: number;
  text: string;
  error: string;
  existing: boolean;
  muted: boolean;
  removed: boolean;
}

/** The topics field as a list (a form with one topic row sends a single string). */
function topicItems(topics: NonNullable<PreferencesBody['topics']>): Array<z.infer<typeof topicItem>> {
  return Array.isArray(topics) ? topics : [topics];
}

/** Form rows -> the service's topic list. Removed rows become blanks, so topic numbers in errors match rows. */
function topicsFromBody(body: PreferencesBody, form: boolean): PreferencesInput['topics'] {
  if (body.topics === undefined) return undefined;
  const items = topicItems(body.topics);
  const mute = new Set(body.mute);
  const remove = new Set(body.remove);
  return items.map((item, i) => {
    if (typeof item !== 'string') return item;
    if (remove.has(String(i))) return '';
    // A form sends its whole state: an unchecked box unmutes. JSON strings keep the current state.
    return form ? { text: item, muted: mute.has(String(i)) } : item;
  });
}

function formatPause(iso: string | null, timeZone: string): string {
  if (!iso) return '';
  const f = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone });
  return `${f.format(new Date(iso))} (${timeZone})`;
}

type Pages = RouteDeps['pages'];
type Subscribers = RouteDeps['door'];
type PageExtra = { saved?: boolean; error?: FieldError; pauseDays?: string; status?: number };

function renderPreferences(reply: FastifyReply, pages: Pages, token: string, view: PreferencesView, rows: TopicRow[], extra: PageExtra = {}): FastifyReply {
  const { error } = extra;
  const withErrors = rows.map((row) => ({ ...row, error: topicErrorAt(error, row.index) }));
  return sendPage(
    reply,
    pages,
    'preferences',
    {
      title: 'Your digest preferences',
      script: true,
      token,
      email: view.email,
      status: view.status,
      topics: withErrors,
      ...scheduleFields({ ...view, detectTimezone: false }),
      weekdays: weekdayOptions(view.weeklyDay),
      pausedUntil: formatPause(view.pausedUntil, view.timezone),
      pauseDays: extra.pauseDays ?? '',
      maxPapers: view.maxPapers ?? '',
      suggestions: view.suggestions,
      modelOnly: view.modelOnly,
      feedUrl: view.feedUrl,
      lastSlot: view.lastSlot,
      saved: extra.saved ?? false,
      error: error?.shown,
      errorField: error?.field,
    },
    extra.status ?? 200,
  );
}

function storedRows(view: PreferencesView): TopicRow[] {
  const rows = view.topics.map((t, index) => ({ index, text: t.text, error: '', existing: true, muted: t.muted, removed: false }));
  return padRows(rows);
}

/** The request body -> the service's input (a form sends its whole state, JSON only what it names). */
function preferencesInput(body: PreferencesBody, json: boolean): PreferencesInput {
  return {
    topics: topicsFromBody(body, !json),
    timezone: blankToUndefined(body.timezone),
    deliveryHour: toOptionalInt(body.deliveryHour),
    frequency: blankToUndefined(body.frequency),
    weeklyDay: toOptionalInt(body.weeklyDay),
    pauseDays: toOptionalInt(body.pauseDays),
    maxPapers: typeof body.maxPapers === 'string' && body.maxPapers.trim() === '' ? 0 : toOptionalInt(body.maxPapers),
    suggestions: checkbox(body.suggestions, body.learning),
    modelOnly: checkbox(body.modelOnly, body.learning),
  };
}

/** The stored view with the submitted schedule laid over it (valid values only), to show the form as submitted. */
function submittedView(stored: PreferencesView, input: PreferencesInput): PreferencesView {
  return {
    ...stored,
    timezone: input.timezone ?? stored.timezone,
    deliveryHour: input.deliveryHour !== undefined && Number.isInteger(input.deliveryHour) ? input.deliveryHour : stored.deliveryHour,
    frequency: input.frequency === 'weekly' || input.frequency === 'daily' ? input.frequency : stored.frequency,
    weeklyDay: input.weeklyDay !== undefined && Number.isInteger(input.weeklyDay) ? input.weeklyDay : stored.weeklyDay,
  };
}

function registerPreferencesPage(app: FastifyInstance, { door: subscribers, pages }: RouteDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/preferences/:token',
    { schema: { params: tokenParams, querystring: z.object({ saved: z.string().max(5).optional() }) } },
    async (req, reply) => {
      const view = await subscribers.getPreferences(req.params.token);
      return renderPreferences(reply, pages, req.params.token, view, storedRows(view), { saved: req.query.saved === '1' });
    },
  );
}

interface SaveRequest {
  token: string;
  body: PreferencesBody;
  json: boolean;
  input: PreferencesInput;
}

/** A field error: JSON gets 400 with the field; a form is shown again as submitted, the error by the field. */
async function answerFieldError(reply: FastifyReply, subscribers: Subscribers, pages: Pages, save: SaveRequest, fe: FieldError): Promise<FastifyReply> {
  const { token, body, json, input } = save;
  if (json) {
    return reply.code(400).send(fieldErrorJson(fe));
  }
  const submitted = submittedView(await subscribers.getPreferences(token), input);
  const rows = submittedRows(body);
  const pauseDays = typeof body.pauseDays === 'string' ? body.pauseDays : body.pauseDays?.toString();
  return renderPreferences(reply, pages, token, submitted, rows, { error: fe, pauseDays, status: 400 });
}

function registerPreferencesSave(app: FastifyInstance, { door: subscribers, pages }: RouteDeps): void {
  // JSON answers are declared; a form gets HTML pages and redirects (strings, not serialised).
  const answers = { 200: preferencesSaved, 400: fieldErrorBody };
  const schema = { params: tokenParams, body: preferencesBody, response: answers };
  app.withTypeProvider<ZodTypeProvider>().post('/preferences/:token', { schema }, async (req, reply) => {
    const { token } = req.params;
    const body = req.body;
    const json = wantsJson(req);
    const input = preferencesInput(body, json);
    try {
      await subscribers.prepareExamples(input.topics);
      const view = await subscribers.updatePreferences(token, input);
      if (json) return reply.send({ ok: true, preferences: view });
      return reply.redirect(`/preferences/${token}?saved=1`, 303);
    } catch (e) {
      const fe = fieldError(e);
      if (!fe) throw e;
      return answerFieldError(reply, subscribers, pages, { token, body, json, input }, fe);
    }
  });
}

export function registerPreferencesRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerPreferencesPage(app, deps);
  registerPreferencesSave(app, deps);
}

function submittedRows(body: PreferencesBody): TopicRow[] {
  const items = body.topics === undefined ? [] : topicItems(body.topics);
  const mute = new Set(body.mute);
  const remove = new Set(body.remove);
  const rows = items.map((item, index) => {
    const text = typeof item === 'string' ? item : item.text;
    return {
      index,
      text,
      error: '',
      existing: text.trim() !== '',
      muted: mute.has(String(index)),
      removed: remove.has(String(index)),
    };
  });
  return padRows(rows);
}

/** At least BLANK_ROWS empty rows at the end for new topics. */
function padRows(rows: TopicRow[]): TopicRow[] {
  let blanks = 0;
  for (let i = rows.length - 1; i >= 0 && rows[i]!.text.trim() === '' && !rows[i]!.existing; i--) blanks++;
  const out = [...rows];
  while (blanks < BLANK_ROWS) {
    out.push({ index: out.length, text: '', error: '', existing: false, muted: false, removed: false });
    blanks++;
  }
  return out;
}

/** A checkbox of the learning fieldset: JSON true/false, a form value, or (form shown, box unticked) off. */
function checkbox(value: string | boolean | undefined, learningForm: string | undefined): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value !== undefined) return value !== '0' && value !== 'false';
  return learningForm === '1' ? false : undefined;
}
