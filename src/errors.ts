// Errors carry a stable code, whether retrying may help, and the cause.

export interface AppErrorOptions {
  /** True when the same operation may succeed later (network, 4xx SMTP, busy database). */
  temporary?: boolean;
  cause?: unknown;
  /** HTTP status to answer with when the error reaches a route. */
  status?: number;
  /** Where the input is wrong, as data: pages and JSON answers point at it without reading the message. */
  where?: ErrorWhere;
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
  readonly status: number;
  readonly where: ErrorWhere;

  constructor(code: string, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.temporary = options.temporary ?? false;
    this.status = options.status ?? 400;
    this.where = options.where ?? {};
  }
}

/** A user-facing validation error: bad batch, bad topic query, bad CLI argument. */
export function invalid(code: string, message: string): AppError {
  return new AppError(code, message, { status: 400 });
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
