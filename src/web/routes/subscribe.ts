// GET / (subscribe page with the topic builder), POST /subscribe (form or JSON), GET /subscribed.
// The answer is the same whether or not the address is known: no address enumeration.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import {
  blankToUndefined,
  fieldError,
  fieldErrorJson,
  numberish,
  repeated,
  scheduleFields,
  toOptionalInt,
  topicErrorAt,
  type FieldError,
} from '../form-values.ts';
import { sendPage, wantsJson } from '../respond.ts';
import { errorBody, fieldErrorBody, subscribedBody } from '../response-schemas.ts';
import type { RouteDeps } from '../deps.ts';

export const CHECK_INBOX_MESSAGE =
  'If this address can receive a subscription, a confirmation email is on its way. Open it to start receiving digests.';

const MIN_TOPIC_FIELDS = 3;

const subscribeBody = z.object({
  email: z.string().max(1000).default(''),
  topics: repeated,
  timezone: z.string().max(200).optional(),
  deliveryHour: numberish,
  frequency: z.string().max(50).optional(),
});
type SubscribeBody = z.infer<typeof subscribeBody>;

interface FormState {
  email: string;
  topics: string[];
  timezone: string;
  deliveryHour: number;
  frequency: string;
  detectTimezone: boolean;
}

type Pages = RouteDeps['pages'];
type Config = RouteDeps['config'];

function renderForm(reply: FastifyReply, pages: Pages, state: FormState, error?: FieldError, status = 200): FastifyReply {
  const fields = [...state.topics];
  while (fields.length < MIN_TOPIC_FIELDS) fields.push('');
  const topics = fields.map((text, index) => ({ index, text, error: topicErrorAt(error, index) }));
  return sendPage(
    reply,
    pages,
    'subscribe',
    {
      title: 'Research papers on your topics, by email',
      script: true,
      email: state.email,
      topics,
      ...scheduleFields(state),
      error: error?.shown,
      errorField: error?.field,
    },
    status,
  );
}

/** The form as submitted, invalid schedule values replaced by the defaults. */
function submittedState(body: SubscribeBody, deliveryHour: number | undefined, config: Config): FormState {
  return {
    email: body.email,
    topics: body.topics,
    timezone: blankToUndefined(body.timezone) ?? config.DIGEST_TZ,
    deliveryHour: deliveryHour !== undefined && Number.isInteger(deliveryHour) && deliveryHour >= 0 && deliveryHour <= 23 ? deliveryHour : config.DIGEST_HOUR,
    frequency: body.frequency === 'weekly' ? 'weekly' : 'daily',
    detectTimezone: false,
  };
}

function registerSubscribePage(app: FastifyInstance, { config, pages }: RouteDeps): void {
  app.get('/', async (_req, reply) =>
    renderForm(reply, pages, {
      email: '',
      topics: [],
      timezone: config.DIGEST_TZ,
      deliveryHour: config.DIGEST_HOUR,
      frequency: 'daily',
      detectTimezone: true,
    }),
  );
}

/** Per-network limit on POST /subscribe, answered as a 429 AppError. */
function subscribeRateLimit(config: Config) {
  return {
    max: config.SUBSCRIBE_RATE_LIMIT,
    timeWindow: 3_600_000,
    errorResponseBuilder: (_req: unknown, ctx: { after: string }) =>
      new AppError('RATE_LIMITED', `Too many subscription requests from your network. Please try again in ${ctx.after}.`),
  };
}

function registerSubscribePost(app: FastifyInstance, { door: subscribers, config, pages }: RouteDeps): void {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/subscribe',
    {
      // JSON answers are declared; a form gets HTML pages and redirects (strings, not serialised).
      schema: { body: subscribeBody, response: { 202: subscribedBody, 400: fieldErrorBody, 429: errorBody } },
      config: { rateLimit: subscribeRateLimit(config) },
    },
    async (req, reply) => {
      const body: SubscribeBody = req.body;
      const json = wantsJson(req);
      const deliveryHour = toOptionalInt(body.deliveryHour);
      try {
        await subscribers.subscribe(
          {
            email: body.email,
            topics: body.topics,
            timezone: blankToUndefined(body.timezone),
            deliveryHour,
            frequency: blankToUndefined(body.frequency),
          },
          { waitForEmail: false },
        );
      } catch (e) {
        const fe = fieldError(e);
        if (!fe) throw e;
        if (json) {
          return reply.code(400).send(fieldErrorJson(fe));
        }
        return renderForm(reply, pages, submittedState(body, deliveryHour, config), fe, 400);
      }
      if (json) return reply.code(202).send({ ok: true, message: CHECK_INBOX_MESSAGE });
      return reply.redirect('/subscribed', 303);
    },
  );
}

export function registerSubscribeRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerSubscribePage(app, deps);
  registerSubscribePost(app, deps);
  app.get('/subscribed', async (_req, reply) => sendPage(reply, deps.pages, 'check-inbox', { title: 'Check your inbox' }));
}
