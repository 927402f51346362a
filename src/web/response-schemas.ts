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
