import type { components } from './generated/openapi';

/** A stable refusal code of the API (the document's ErrorCode). v1 may add codes. */
export type ErrorCode = components['schemas']['ErrorCode'];
/** What some refusals carry besides their code (the document's ErrorDetails). */
export type ErrorDetails = NonNullable<components['schemas']['Error']['details']>;

/**
 * The API refused (4xx) or failed (5xx): its status, its stable code, a message for people and the
 * details some codes carry. `Code` narrows to the codes one operation may answer (see `attempt`).
 */
export class HearthRefusal<Code extends string = ErrorCode> extends Error {
  override readonly name = 'HearthRefusal';

  constructor(
    readonly status: number,
    readonly code: Code,
    message: string,
    readonly details: ErrorDetails | undefined,
    /** The request id the API gave the answer (X-Request-Id), for support. */
    readonly requestId: string | null,
  ) {
    super(message);
  }

  /** Whether it is this code (narrows `code`). */
  is<C extends Code>(code: C): this is HearthRefusal<C> {
    return this.code === code;
  }
}

/** An answer that is not the API's: no JSON error body (a proxy's page, a cut connection). */
export class HearthTransportError extends Error {
  override readonly name = 'HearthTransportError';

  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The refusal of an answer: the API's error body, or a transport error when there is none. */
export async function refusalOf(response: Response, body?: unknown): Promise<HearthRefusal | HearthTransportError> {
  let parsed = body;
  if (parsed === undefined) {
    try {
      parsed = await response.clone().json();
    } catch {
      parsed = undefined;
    }
  }
  const error = parsed as { error?: unknown; message?: unknown; details?: ErrorDetails } | undefined;
  if (error && typeof error.error === 'string' && typeof error.message === 'string') {
    return new HearthRefusal(response.status, error.error as ErrorCode, error.message, error.details, response.headers.get('x-request-id'));
  }
  return new HearthTransportError(`HTTP ${response.status} without the API's error shape`, response.status);
}
