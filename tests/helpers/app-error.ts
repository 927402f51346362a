// Asserting on the AppError a call throws.
import { expect } from 'vitest';
import { AppError } from '../../src/errors.ts';

/**
 * The AppError `fn` throws. Fails the test when it throws anything else, or nothing
 * (`expectation` completes the message "expected …").
 */
export function appErrorFrom(fn: () => unknown, expectation = 'an AppError'): AppError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return e as AppError;
  }
  throw new Error(`expected ${expectation}`);
}
