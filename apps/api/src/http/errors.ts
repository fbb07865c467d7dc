/**
 * What the API answers for anything a request threw: the one place that turns errors into the spec's
 * shape `{ error, message, details? }` (§7).
 */
import { ApiError, isDatabaseUnreachable } from '@hearth/core';

/** A fault's answer: nothing of the error itself goes out. */
export const INTERNAL_ERROR = { error: 'internal-error', message: 'Something went wrong on our side; retry with backoff.' } as const;

export interface ErrorAnswer {
  status: number;
  body: ReturnType<ApiError['toBody']>;
  headers?: Record<string, string>;
  /** How the cause is logged: a refusal not at all, an outage as a warning, a fault as an error. */
  log: 'none' | 'warn' | 'error';
}

/**
 * An ApiError answers itself. A database that cannot be reached (down, restarting, connections cut,
 * pool timed out) is 503 `unavailable`: the client retries later, and the pool recovers on its own.
 * Anything else is a fault: 500 `internal-error`, with nothing of the error in the answer.
 */
export function answerFor(err: unknown): ErrorAnswer {
  if (err instanceof ApiError) return { status: err.status, body: err.toBody(), headers: err.headers, log: 'none' };
  if (isDatabaseUnreachable(err)) {
    const unavailable = new ApiError('unavailable', 'The service cannot reach its database right now; retry shortly.');
    return { status: unavailable.status, body: unavailable.toBody(), log: 'warn' };
  }
  return { status: 500, body: { ...INTERNAL_ERROR }, log: 'error' };
}
