// The one error a topic query can fail with: TOPIC_INVALID, answered as HTTP 400, with the 1-based
// character position it names (when it names one) as data.
import { AppError } from '../errors.ts';

export const TOPIC_INVALID = 'TOPIC_INVALID';

export function topicError(message: string, position?: number): AppError {
  return new AppError(TOPIC_INVALID, message, { where: { field: 'topics', ...(position === undefined ? {} : { position }) } });
}

/** The same error, named by the topic's 0-based place in the subscriber's list. */
export function inTopic(e: AppError, index: number): AppError {
  return new AppError(TOPIC_INVALID, `topic ${index + 1}: ${e.message}`, { where: { ...e.where, field: 'topics', index } });
}
