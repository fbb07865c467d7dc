/**
 * What the API answers for anything a request threw: the one place that turns errors into the spec's
 * shape `{ error, message, details? }` (§7).
 */
import type { TSchema } from '@sinclair/typebox';
import { Refusal, ERROR_STATUS } from '@hearth/core';
import { isDatabaseUnreachable } from '@hearth/core/db';
import type { AnyRoute } from './route';

/** A fault's answer: nothing of the error itself goes out. */
export const INTERNAL_ERROR = { error: 'internal-error', message: 'Something went wrong on our side; retry with backoff.' } as const;

export interface ErrorAnswer {
  status: number;
  body: ReturnType<Refusal['toBody']>;
  headers?: Record<string, string>;
  /** How the cause is logged: a refusal not at all, an outage as a warning, a fault as an error. */
  log: 'none' | 'warn' | 'error';
}

/**
 * An Refusal answers itself. A database that cannot be reached (down, restarting, connections cut,
 * pool timed out) is 503 `unavailable`: the client retries later, and the pool recovers on its own.
 * Anything else is a fault: 500 `internal-error`, with nothing of the error in the answer.
 */
export function answerFor(err: unknown): ErrorAnswer {
  if (err instanceof Refusal) return { status: ERROR_STATUS[err.code], body: err.toBody(), headers: err.headers, log: 'none' };
  if (isDatabaseUnreachable(err)) {
    const unavailable = new Refusal('unavailable', 'The service cannot reach its database right now; retry shortly.');
    return { status: ERROR_STATUS.unavailable, body: unavailable.toBody(), log: 'warn' };
  }
  return { status: 500, body: { ...INTERNAL_ERROR }, log: 'error' };
}

/** The parts of a request a refusal's `details.field` starts with on the wire. */
const INPUT_PARTS = ['path', 'query', 'body', 'header'] as const;

/** Whether a TypeBox object schema declares the property. */
function declares(schema: TSchema | undefined, name: string): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties !== undefined && Object.hasOwn(properties, name);
}

/**
 * The refusal as the wire says it. Core names a field relative to the input it was given
 * (`quantity`, `documents.0.version`, `cursor`); the API knows where it put that input, so it adds
 * the part: the route's path parameters, then its query, then its body, whichever declares the
 * field's first name (the body when none does). A field that already names its part (the
 * pipeline's own checks, or core where one name is in two parts) is kept as it is.
 */
export function placeFields(err: unknown, route: AnyRoute): unknown {
  if (!(err instanceof Refusal)) return err;
  const field = err.details?.field;
  if (typeof field !== 'string' || INPUT_PARTS.some((part) => field === part || field.startsWith(`${part}.`))) return err;
  const name = field.split('.', 1)[0];
  const part = declares(route.params, name) ? 'path' : declares(route.query, name) ? 'query' : 'body';
  return new Refusal(err.code, err.message, { ...err.details, field: `${part}.${field}` }, err.headers);
}
