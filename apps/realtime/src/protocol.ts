/**
 * The sessions socket, protocol version 1 (docs/realtime.md): frames are JSON text
 * `{ v: 1, type, id?, payload? }`. This module is the one place for the protocol's constants, its
 * close codes and the parsing of client frames; the constants the API shares (version, path, limits) live in @hearth/core's sessions/socket.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { Refusal, createAjv, describe, fieldOf, firstError, type ErrorCode } from '@hearth/core';
import { PROTOCOL_VERSION } from '@hearth/core/sessions';

export { PROTOCOL_VERSION, SOCKET_PATH, MAX_FRAME_BYTES, effectiveLimits, type RealtimeLimits } from '@hearth/core/sessions';

/** A socket must send `authorize` within this long of opening. */
export const AUTHORIZE_TIMEOUT_MS = 10_000;
/** Frames a socket may send before its authorization has completed (authorize itself included). */
export const PRE_AUTHORIZE_FRAMES = 10;
/** Server pings every so often; a socket that has not answered the previous ping is dropped. */
export const HEARTBEAT_MS = 30_000;
/** A socket with more than this waiting to be sent is a slow consumer and is closed with 1008. */
export const SLOW_CONSUMER_BYTES = 1024 * 1024;

export const CLOSE = {
  /** The server is shutting down (or restarting): reconnect. */
  goingAway: 1001,
  /** This process is draining (deploy, scale-in, node drain): reconnect, with jitter, and land on another pod. */
  serviceRestart: 1012,
  /** A policy was broken: rate limit passed after a warning, too many frames before authorizing, slow consumer. */
  policy: 1008,
  /** A frame larger than the socket's maxMessageBytes. */
  tooBig: 1009,
  /** Not (or no longer) authorized: bad token, authorize late or missing, token expired, signed out, deleted. */
  unauthorized: 4401,
} as const;

export type FrameId = string | number;

export type ClientFrame =
  | { type: 'authorize'; id?: FrameId; token: string }
  | { type: 'subscribe'; id?: FrameId; sessionId: string }
  | { type: 'unsubscribe'; id?: FrameId; sessionId: string }
  | { type: 'ping'; id?: FrameId };

export type ServerFrameType = 'authorized' | 'subscribed' | 'session' | 'session-closed' | 'error' | 'pong';

/** A refused frame: the error to answer and the id to echo (when the frame had a usable one). */
export interface FrameRefusal {
  error: Refusal;
  id?: FrameId;
}

const MAX_ID_LENGTH = 64;
const MAX_TOKEN_LENGTH = 4000;

// Frames are validated as the API validates bodies: TypeBox schemas compiled by ajv, the first failure
// answered `invalid-request` with `details.field` naming it (fields of the frame at the top level,
// `payload.<name>` inside the payload).
const ajv = createAjv();

/** `id`, checked before the rest so that a usable id is echoed on whatever refusal follows. */
const FrameIdSchema = Type.Union([
  Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }),
  Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
]);

/** Every frame: `{ v: 1, type, id?, payload? }` and nothing else; the payload is checked by type below. */
const EnvelopeSchema = Type.Object(
  {
    v: Type.Literal(PROTOCOL_VERSION),
    type: Type.String(),
    id: Type.Optional(Type.Unknown()),
    payload: Type.Optional(Type.Object({})),
  },
  { additionalProperties: false },
);

/** A session id as the HTTP routes take it: 1 to 64 characters. */
const SessionIdPayload = Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }) }, { additionalProperties: false });

/** Each client frame type's payload (an absent payload is checked as `{}`). */
const PayloadSchemas = {
  authorize: Type.Object({ token: Type.String({ minLength: 1, maxLength: MAX_TOKEN_LENGTH }) }, { additionalProperties: false }),
  subscribe: SessionIdPayload,
  unsubscribe: SessionIdPayload,
  ping: Type.Object({}, { additionalProperties: false }),
};
type ClientFrameType = keyof typeof PayloadSchemas;

const validId = ajv.compile(FrameIdSchema);
const validEnvelope = ajv.compile<Static<typeof EnvelopeSchema>>(EnvelopeSchema);
/** A Map, not an object: a `type` such as "constructor" must not find anything. */
const validPayload = new Map<string, ValidateFunction>(Object.entries(PayloadSchemas).map(([type, schema]) => [type, ajv.compile(schema)]));

const invalid = (field: string, message: string) => new Refusal('invalid-request', message, { field });

/** The refusal for a validator's first error; `prefix` names where the value sits (`''`: the frame itself). */
function refusalOf(fn: ValidateFunction, prefix: string): Refusal {
  const error = firstError(fn);
  const field = fieldOf(error, prefix);
  if (field === '') return invalid('frame', NOT_AN_OBJECT);
  return invalid(field, `${field} ${describe(error)}.`);
}

const NOT_AN_OBJECT = 'A frame must be a JSON object.';

/**
 * Parses one client text frame. Strict like the HTTP API: an unknown field, a wrong `v`, an unknown
 * type or a malformed payload is refused with `invalid-request` naming the field.
 */
export function parseClientFrame(text: string): ClientFrame | FrameRefusal {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { error: invalid('frame', NOT_AN_OBJECT) };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { error: invalid('frame', NOT_AN_OBJECT) };

  const rawId = (raw as { id?: unknown }).id;
  if (rawId !== undefined && !validId(rawId)) {
    return { error: invalid('id', `id must be a string of 1 to ${MAX_ID_LENGTH} characters or an integer.`) };
  }
  const id = rawId as FrameId | undefined;
  const refuse = (error: Refusal): FrameRefusal => (id === undefined ? { error } : { error, id });

  if (!validEnvelope(raw)) return refuse(refusalOf(validEnvelope, ''));
  const validate = validPayload.get(raw.type);
  if (!validate) return refuse(invalid('type', `Unknown frame type "${raw.type.slice(0, 40)}".`));
  const payload = raw.payload ?? {};
  if (!validate(payload)) return refuse(refusalOf(validate, 'payload'));

  const type = raw.type as ClientFrameType;
  let frame: ClientFrame;
  switch (type) {
    case 'authorize':
      frame = { type, token: (payload as Static<(typeof PayloadSchemas)['authorize']>).token };
      break;
    case 'subscribe':
    case 'unsubscribe':
      frame = { type, sessionId: (payload as Static<typeof SessionIdPayload>).sessionId };
      break;
    case 'ping':
      frame = { type };
      break;
  }
  if (id !== undefined) frame.id = id;
  return frame;
}

/** One server frame as sent. */
export function encodeFrame(type: ServerFrameType, payload: unknown, id?: FrameId): string {
  return JSON.stringify(id === undefined ? { v: PROTOCOL_VERSION, type, payload } : { v: PROTOCOL_VERSION, type, id, payload });
}

export function errorFrame(code: ErrorCode, message: string, details?: Record<string, unknown>, id?: FrameId): string {
  return encodeFrame('error', details === undefined ? { error: code, message } : { error: code, message, details }, id);
}
