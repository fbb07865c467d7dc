/**
 * The spec's error codes (§7), each with its status, and the one error type every layer throws.
 * Anything thrown that is not an ApiError is a fault: it is logged and answered as a bare 500.
 */
export const ERROR_STATUS = {
  'invalid-request': 400,
  'invalid-ticket': 400,
  unauthorized: 401,
  forbidden: 403,
  'service-disabled': 403,
  'project-not-approved': 403,
  'provider-disabled': 403,
  'quota-exceeded': 403,
  'purchase-not-allowed': 403,
  'not-found': 404,
  conflict: 409,
  'idempotency-conflict': 409,
  'insufficient-balance': 409,
  'allowance-exceeded': 409,
  'balance-cap': 409,
  disabled: 409,
  'not-purchasable': 409,
  'owned-limit': 409,
  locked: 409,
  'not-usable': 409,
  'already-consumed': 409,
  'no-current-realm': 409,
  'no-steam-account': 409,
  'already-active': 409,
  'order-in-progress': 409,
  'payload-too-large': 413,
  'rate-limited': 429,
  'internal-error': 500,
  'provider-refused': 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export type ErrorDetails = Record<string, unknown>;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }

  toBody(): { error: ErrorCode; message: string; details?: ErrorDetails } {
    return this.details === undefined
      ? { error: this.code, message: this.message }
      : { error: this.code, message: this.message, details: this.details };
  }
}

/** Factories for the refusals every area uses; the message is for people and may be reworded. */
export const refuse = {
  invalid: (field: string, message: string) => new ApiError('invalid-request', message, { field }),
  unauthorized: (message = 'A valid credential is required.') => new ApiError('unauthorized', message),
  forbidden: (message = 'This credential may not do that.') => new ApiError('forbidden', message),
  notFound: (what = 'That') => new ApiError('not-found', `${what} was not found.`),
  /** A field naming something that does not exist (a manifest's reference to another document). */
  missingReference: (field: string, message: string) => new ApiError('not-found', message, { field }),
  /** A field past its plan's limit (a manifest asking more than its plan allows). */
  overPlan: (field: string, message: string, limit: number) => new ApiError('quota-exceeded', message, { field, quota: field, limit }),
  conflict: (message: string, details?: ErrorDetails) => new ApiError('conflict', message, details),
  quota: (quota: string, limit: number, message: string) =>
    new ApiError('quota-exceeded', message, { quota, limit }),
  tooLarge: (limit: number) =>
    new ApiError('payload-too-large', `The body is larger than this route takes (${limit} bytes).`, { limit }),
  unavailable: (message: string) => new ApiError('unavailable', message),
};
