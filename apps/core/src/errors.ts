/**
 * The one error type core throws for a refusal: the spec's code (spec/error-codes.ts), a message for
 * people, details (a field named relative to core's input; the API adds the request part). It
 * carries no HTTP status: each adapter says the code in its own terms (the API its status from
 * ERROR_STATUS, the CLI a line, the operator a Ready reason). Anything thrown that is not an
 * Refusal is a fault: it is logged and answered as a bare 500.
 */
import type { ErrorCode } from './contract/error-codes';
import type { RateOutcome } from './coord/coordination';

export { ERROR_CODES, ERROR_STATUS, type ErrorCode } from './contract/error-codes';

export type ErrorDetails = Record<string, unknown>;

export class Refusal extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'Refusal';
  }

  toBody(): { error: ErrorCode; message: string; details?: ErrorDetails } {
    return this.details === undefined ? { error: this.code, message: this.message } : { error: this.code, message: this.message, details: this.details };
  }
}

/**
 * A per-player limit a domain counts itself from its own rows (support filings, store identify): 429
 * `rate-limited` with Retry-After, carrying the caller's standing so the route can put it into the
 * X-RateLimit-* headers.
 */
export class RouteLimitReached extends Refusal {
  constructor(
    readonly standing: RateOutcome['nearest'],
    what: string,
  ) {
    const retry = Math.max(1, standing.resetSeconds);
    super('rate-limited', `${what}; retry in ${retry} s.`, { retryAfterSeconds: retry }, { 'Retry-After': String(retry) });
  }
}

/** Factories for the refusals every area uses; the message is for people and may be reworded. */
export const refuse = {
  invalid: (field: string, message: string) => new Refusal('invalid-request', message, { field }),
  unauthorized: (message = 'A valid credential is required.') => new Refusal('unauthorized', message),
  forbidden: (message = 'This credential may not do that.') => new Refusal('forbidden', message),
  /**
   * Nothing of that in the environment. With `named`, the refusal names what was asked for (its key,
   * quoted) and the input that named it (`field`, relative: the API places it, `path.cardTypeKey`), so a
   * typo is seen at once.
   */
  notFound: (what = 'That', named?: { key: string; field: string }) =>
    named
      ? new Refusal('not-found', `${what} "${named.key}" was not found in this environment.`, { field: named.field })
      : new Refusal('not-found', `${what} was not found.`),
  /** A field naming something that does not exist (a manifest's reference to another document). */
  missingReference: (field: string, message: string) => new Refusal('not-found', message, { field }),
  /** A field past its plan's limit (a manifest asking more than its plan allows). */
  overPlan: (field: string, message: string, limit: number) => new Refusal('quota-exceeded', message, { field, quota: field, limit }),
  conflict: (message: string, details?: ErrorDetails) => new Refusal('conflict', message, details),
  quota: (quota: string, limit: number, message: string) => new Refusal('quota-exceeded', message, { quota, limit }),
  tooLarge: (limit: number) => new Refusal('payload-too-large', `The body is larger than this route takes (${limit} bytes).`, { limit }),
  unavailable: (message: string) => new Refusal('unavailable', message),
};
