// The one error a topic query can fail with: TOPIC_INVALID, answered as HTTP 400.
import { AppError } from '../errors.ts';

export const TOPIC_INVALID = 'TOPIC_INVALID';

export function topicError(message: string): AppError {
  return new AppError(TOPIC_INVALID, message, { status: 400 });
}
