/**
 * The sessions socket, protocol version 1 (DESIGN.md, docs/realtime.md): frames are JSON text
 * `{ v: 1, type, id?, payload? }`. This module is the one place for the protocol's constants, its
 * close codes and the parsing of client frames; the constants the API shares (version, path, limits) live in @hearth/core's sessions/socket.ts.
 */
import { ApiError, PROTOCOL_VERSION, type ErrorCode } from '@hearth/core';

export { PROTOCOL_VERSION, SOCKET_PATH, MAX_FRAME_BYTES, effectiveLimits, type RealtimeLimits } from '@hearth/core';

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
  error: ApiError;
  id?: FrameId;
}

const FRAME_KEYS = new Set(['v', 'type', 'id', 'payload']);
const MAX_ID_LENGTH = 64;
const MAX_TOKEN_LENGTH = 4000;

const invalid = (field: string, message: string) => new ApiError('invalid-request', message, { field });

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A session id as the HTTP routes take it: 1 to 64 characters. */
function sessionIdOf(payload: Record<string, unknown>): string | ApiError {
  const unknown = Object.keys(payload).find((k) => k !== 'sessionId');
  if (unknown !== undefined) return invalid(`payload.${unknown}`, `payload.${unknown} is not taken by this frame.`);
  const id = payload.sessionId;
  if (typeof id !== 'string' || id.length < 1 || id.length > MAX_ID_LENGTH) {
    return invalid('payload.sessionId', 'payload.sessionId must be a string of 1 to 64 characters.');
  }
  return id;
}

/**
 * Parses one client text frame. Strict like the HTTP API: an unknown field, a wrong `v`, an unknown
 * type or a malformed payload is refused with `invalid-request` naming the field.
 */
export function parseClientFrame(text: string): ClientFrame | FrameRefusal {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { error: invalid('frame', 'A frame must be a JSON object.') };
  }
  if (!isObject(raw)) return { error: invalid('frame', 'A frame must be a JSON object.') };

  let id: FrameId | undefined;
  if (raw.id !== undefined) {
    const ok =
      (typeof raw.id === 'string' && raw.id.length >= 1 && raw.id.length <= MAX_ID_LENGTH) ||
      (typeof raw.id === 'number' && Number.isSafeInteger(raw.id));
    if (!ok) return { error: invalid('id', 'id must be a string of 1 to 64 characters or an integer.') };
    id = raw.id as FrameId;
  }
  const refuse = (error: ApiError): FrameRefusal => (id === undefined ? { error } : { error, id });

  const unknownKey = Object.keys(raw).find((k) => !FRAME_KEYS.has(k));
  if (unknownKey !== undefined) return refuse(invalid(unknownKey, `${unknownKey} is not a field of a frame.`));
  if (raw.v !== PROTOCOL_VERSION) return refuse(invalid('v', `v must be ${PROTOCOL_VERSION}, the protocol version.`));
  if (typeof raw.type !== 'string') return refuse(invalid('type', 'type is required.'));
  if (raw.payload !== undefined && !isObject(raw.payload)) return refuse(invalid('payload', 'payload must be a JSON object.'));
  const payload = (raw.payload ?? {}) as Record<string, unknown>;
  const withId = <T extends ClientFrame>(frame: T): T => (id === undefined ? frame : { ...frame, id });

  switch (raw.type) {
    case 'authorize': {
      const unknown = Object.keys(payload).find((k) => k !== 'token');
      if (unknown !== undefined) return refuse(invalid(`payload.${unknown}`, `payload.${unknown} is not taken by this frame.`));
      const token = payload.token;
      if (typeof token !== 'string' || token.length < 1 || token.length > MAX_TOKEN_LENGTH) {
        return refuse(invalid('payload.token', "payload.token must be the player's access token."));
      }
      return withId({ type: 'authorize', token });
    }
    case 'subscribe':
    case 'unsubscribe': {
      const sessionId = sessionIdOf(payload);
      if (sessionId instanceof ApiError) return refuse(sessionId);
      return withId({ type: raw.type, sessionId });
    }
    case 'ping': {
      const unknown = Object.keys(payload)[0];
      if (unknown !== undefined) return refuse(invalid(`payload.${unknown}`, `payload.${unknown} is not taken by this frame.`));
      return withId({ type: 'ping' });
    }
    default:
      return refuse(invalid('type', `Unknown frame type "${String(raw.type).slice(0, 40)}".`));
  }
}

/** One server frame as sent. */
export function encodeFrame(type: ServerFrameType, payload: unknown, id?: FrameId): string {
  return JSON.stringify(id === undefined ? { v: PROTOCOL_VERSION, type, payload } : { v: PROTOCOL_VERSION, type, id, payload });
}

export function errorFrame(code: ErrorCode, message: string, details?: Record<string, unknown>, id?: FrameId): string {
  return encodeFrame('error', details === undefined ? { error: code, message } : { error: code, message, details }, id);
}
