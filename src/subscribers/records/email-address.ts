// Email addresses as subscribers type them -> one canonical form (trimmed, domain lower-cased), validated.
import { z } from 'zod';
import { fieldInvalid } from '../../errors.ts';

const emailSchema = z.email().max(254);

/** Throws AppError EMAIL_INVALID (400) naming the field. */
export function normaliseEmail(input: string): string {
  const trimmed = input.trim();
  const at = trimmed.lastIndexOf('@');
  const candidate = at > 0 ? `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toLowerCase()}` : trimmed;
  if (!emailSchema.safeParse(candidate).success) {
    const shown = trimmed.length > 60 ? `${trimmed.slice(0, 60)}…` : trimmed;
    throw fieldInvalid('EMAIL_INVALID', 'email', `"${shown}" is not a valid email address`);
  }
  return candidate;
}
