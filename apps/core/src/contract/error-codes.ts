/**
 * The spec's error codes (§7), a closed list, each with the status the spec gives it. Values of the
 * spec layer: the response shapes list the codes, core throws them (errors.ts), and only the
 * adapters that speak HTTP read the statuses.
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
