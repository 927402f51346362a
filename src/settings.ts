// Building blocks of the environment's zod schema, shared by src/config.ts and the settings each paper
// source declares for itself (src/ingest/source-kinds/).
import { z } from 'zod';

export const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** A whole number in [min, max]; every failure (not a number, a fraction, out of range) says the same plain line. */
export const int = (min: number, max: number) => {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

export const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

export const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), { error: 'must be an http(s) URL' })
  .transform((u) => u.replace(/\/+$/, ''));
