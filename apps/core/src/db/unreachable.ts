/**
 * Whether an error means PostgreSQL cannot be reached right now, rather than that a query is wrong:
 * the one rule by which the API answers 503 `unavailable` (retry later) instead of a 500 fault.
 * The pool recovers by itself: knex drops a connection once it has seen it fail, and opens new ones
 * when the database answers again.
 */

/** Socket errors of a connection that could not be made or was cut. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going away, not there yet or full: 57P01 admin_shutdown (also what
 * pg_terminate_backend sends), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up or
 * shutting down), 53300 too_many_connections. Class 08 (connection exceptions) is matched whole.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

/** node-postgres says these without a code when the socket closes under it or a connect times out. */
const PG_CONNECTION_MESSAGES = /Connection terminated|connection timeout|timeout expired|is not queryable/i;

export function isDatabaseUnreachable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  // The pool waited its acquire timeout (createDb) for a connection.
  if (name === 'KnexTimeoutError') return true;
  if (typeof message === 'string' && PG_CONNECTION_MESSAGES.test(message)) return true;
  // Connecting to a name with several addresses fails with an AggregateError of each attempt.
  const inner = (err as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner.some((e) => isDatabaseUnreachable(e, depth + 1))) return true;
  return isDatabaseUnreachable((err as { cause?: unknown }).cause, depth + 1);
}
