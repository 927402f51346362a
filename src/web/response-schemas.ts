// Zod schemas of the JSON answers, shared by the routes that declare `schema.response`
// (fastify-type-provider-zod serialises through them: a field not declared is not sent).
import { z } from 'zod';

/** Every refusal in JSON: web/errors.ts and the routes' own early answers. */
export const errorBody = z.object({
  ok: z.literal(false),
  code: z.string().optional(),
  error: z.string(),
});

export const okBody = z.object({ ok: z.literal(true) });

/** A refused form or JSON body (web/form-values.ts fieldErrorJson): the error's place as data. */
export const fieldErrorBody = errorBody.extend({
  field: z.string().optional(),
  /** 1-based topic number. */
  topic: z.number().optional(),
  /** 1-based character position inside that topic. */
  position: z.number().optional(),
});

/** POST /subscribe in JSON: the same answer whether or not the address was known. */
export const subscribedBody = z.object({ ok: z.literal(true), message: z.string() });

/** POST /preferences/:token in JSON: the preferences as saved (subscribers/types.ts PreferencesView). */
export const preferencesSaved = z.object({
  ok: z.literal(true),
  preferences: z.object({
    email: z.string(),
    status: z.enum(['pending', 'confirmed', 'unsubscribed', 'suppressed']),
    timezone: z.string(),
    deliveryHour: z.number(),
    frequency: z.enum(['daily', 'weekly']),
    weeklyDay: z.number(),
    pausedUntil: z.string().nullable(),
    topics: z.array(z.object({ id: z.number(), text: z.string(), muted: z.boolean() })),
    unsubscribeUrl: z.string(),
    preferencesUrl: z.string(),
    maxPapers: z.number().nullable(),
    suggestions: z.boolean(),
    modelOnly: z.boolean(),
    feedUrl: z.string(),
    lastSlot: z.string(),
  }),
});
