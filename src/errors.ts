// Errors carry a stable code, whether retrying may help, and the cause. The HTTP status a code answers
// with is the web layer's decision (src/web/errors.ts).

export interface AppErrorOptions {
  /** True when the same operation may succeed later (network, 4xx SMTP, busy database). */
  temporary?: boolean;
  cause?: unknown;
  /** Where the input is wrong, as data: pages and JSON answers point at it without reading the message. */
  where?: ErrorWhere;
  /** What is wrong, without the place ("must be a whole hour from 0 to 23"): a page puts its own label in front. */
  problem?: string;
  /** A link the error page offers as its button when it depends on who asked (e.g. their preferences page). */
  action?: { url: string; label: string };
  /** Seconds after which trying again should work (a 503's Retry-After header). */
  retryInSeconds?: number;
}

/** The place of a validation error in what the user sent. */
export interface ErrorWhere {
  /** The input field: 'email', 'topics', 'timezone', 'deliveryHour', … */
  field?: string;
  /** 0-based item of a list field (which topic). */
  index?: number;
  /** 1-based character position inside that item (topic query errors). */
  position?: number;
}

export class AppError extends Error {
  readonly code: string;
  readonly temporary: boolean;
  readonly where: ErrorWhere;
  readonly problem: string | undefined;
  readonly action: { url: string; label: string } | undefined;
  readonly retryInSeconds: number | undefined;

  constructor(code: string, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.temporary = options.temporary ?? false;
    this.where = options.where ?? {};
    this.problem = options.problem;
    this.action = options.action;
    this.retryInSeconds = options.retryInSeconds;
  }
}

/**
 * A bad value in one input field (400): the message names the field as the API and the CLI spell it
 * (`deliveryHour: must be …`); `where.field` and `problem` let a form show it under its own label instead.
 */
export function fieldInvalid(code: string, field: string, problem: string): AppError {
  return new AppError(code, `${field}: ${problem}`, { where: { field }, problem });
}

/** A user-facing validation error: bad batch, bad topic query, bad CLI argument. */
export function invalid(code: string, message: string): AppError {
  return new AppError(code, message);
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
