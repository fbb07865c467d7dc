/**
 * One socket and its state. The state lives in plain fields of the socket object, so an idle socket
 * costs a few words beyond `ws` itself: no closure, listener, timer or side object per socket. The
 * modules beside this one (socket-index, frame-limiter, authorize-deadlines, token-expiries,
 * authorization, fanout) read and write these fields; server.ts wires them.
 */
import { WebSocket } from 'ws';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import type { ClientFrame, ServerFrameType } from './protocol';

/** Open, authorize not yet received. */
export const AWAITING = 0;
/** authorize received, being checked. */
export const AUTHORIZING = 1;
export const AUTHORIZED = 2;
/** Closed by either side, or being closed: nothing more is sent or handled. */
export const CLOSED = 3;

export class HearthSocket extends WebSocket {
  state = AWAITING;
  /** The client's address (behind trusted proxies, the client's own), for log lines. */
  address = '';
  /** The page's origin a browser sent with the upgrade; null for a native client (docs/realtime.md "Browsers"). */
  origin: string | null = null;
  playerId: string | null = null;
  env: EnvironmentContext | null = null;
  /** The token's `iat` (sign-out cut-off check) and `exp` (seconds). */
  iat = 0;
  exp = 0;
  /** Sessions followed because the player holds a seat: they do not count against maxSubscriptions. */
  seated: string[] | null = null;
  /** Sessions followed through `subscribe`: they count against maxSubscriptions. */
  watched: string[] | null = null;
  /** Whether the socket answered the last heartbeat ping. */
  alive = true;
  /** The heartbeat slice the socket is in. */
  slice = 0;
  /** Frames received before authorization completed. */
  early = 0;
  /** Frames received while the authorize frame was being checked, handled in order afterwards. */
  queue: ClientFrame[] | null = null;
  /** Rate windows (seconds since the limiter's clock base) and counts in the current second and minute. */
  second = -1;
  perSecond = 0;
  perMinute = 0;
  /** After an `error rate-limited`: the second the refusing window ends; a frame before then closes the socket. */
  limitedUntil = -1;
  /** The close code this side chose, for the metrics. */
  closeCode = 0;
}

/**
 * A socket whose player and environment are known: from its authorize being checked on (the token
 * was valid), through AUTHORIZED, to its close. The index holds only these, so who a socket is needs
 * no `!` once the types say it was authorized.
 */
export type IdentifiedSocket = HearthSocket & { playerId: string; env: EnvironmentContext };

/** Records who the socket is (a valid token's player and environment). */
export function identify(ws: HearthSocket, playerId: string, env: EnvironmentContext): IdentifiedSocket {
  ws.playerId = playerId;
  ws.env = env;
  return ws as IdentifiedSocket;
}

/** Whether who the socket is has been recorded (identify). */
export function isIdentified(ws: HearthSocket): ws is IdentifiedSocket {
  return ws.playerId !== null && ws.env !== null;
}

/** Whether the socket is authorized now (its player and environment are then known). */
export function isAuthorized(ws: HearthSocket): ws is IdentifiedSocket {
  return ws.state === AUTHORIZED && isIdentified(ws);
}

/** What the modules ask of the server: the one way to send, close, and give up on a socket. */
export interface SocketHost {
  /** Sends one frame (skipped when the socket is not open; a slow consumer is closed instead). */
  send(ws: HearthSocket, data: string | Buffer, type: ServerFrameType): void;
  /** Closes from this side: nothing more is handled or sent, the socket leaves every index at once. */
  close(ws: HearthSocket, code: number, reason: string): void;
  /** Something behind the socket failed (database, Redis): logged, and the socket closed with 1011. */
  fault(ws: HearthSocket, err: unknown, what: string): void;
}
