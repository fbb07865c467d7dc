/**
 * The plan's frame rates (docs/realtime.md "Limits"): fixed clock windows, a second from .000 and a
 * minute from :00, as the HTTP limits. The first frame past either limit is refused with an
 * `error rate-limited` (not acted on, not counted); any frame before that window ends closes the
 * socket with 1008. Before authorization completes no plan is known: a socket may send
 * PRE_AUTHORIZE_FRAMES frames, and the next one closes it.
 *
 * The counts live in the socket's own fields (FrameCounts), so the limiter holds nothing per socket.
 */
import { PRE_AUTHORIZE_FRAMES, errorFrame, type FrameId, type RealtimeLimits } from './protocol';

/** The fields of a socket the limiter keeps its counts in. */
export interface FrameCounts {
  /** The current window's second, counted from the limiter's clock base (-1: none yet). */
  second: number;
  perSecond: number;
  perMinute: number;
  /** After a refusal: the second the refusing window ends. */
  limitedUntil: number;
  /** Frames received before authorization completed. */
  early: number;
}

/** The frame may go on. */
export const PASS = 0;
/** The frame came before the window that refused the previous one ended: close the socket (1008). */
export const CLOSE_SOCKET = 'close';
/** PASS, CLOSE_SOCKET, or the seconds to wait: the frame is refused with `error rate-limited`. */
export type FrameVerdict = typeof PASS | typeof CLOSE_SOCKET | number;

export class FrameLimiter {
  /** Windows count seconds from a minute boundary, so they stay small integers. */
  private readonly clockBase: number;

  constructor(nowMs = Date.now()) {
    this.clockBase = Math.floor(nowMs / 60_000) * 60_000;
  }

  /** Counts a frame of an authorized socket against its plan's rates. */
  count(ws: FrameCounts, limits: Pick<RealtimeLimits, 'messagesPerSecond' | 'messagesPerMinute'>, nowMs = Date.now()): FrameVerdict {
    const second = Math.floor((nowMs - this.clockBase) / 1000);
    if (second < ws.limitedUntil) return CLOSE_SOCKET;
    if (second !== ws.second) {
      if (Math.floor(second / 60) !== Math.floor(ws.second / 60)) ws.perMinute = 0;
      ws.perSecond = 0;
      ws.second = second;
    }
    if (ws.perSecond >= limits.messagesPerSecond) {
      ws.limitedUntil = second + 1;
      return 1;
    }
    if (ws.perMinute >= limits.messagesPerMinute) {
      ws.limitedUntil = (Math.floor(second / 60) + 1) * 60;
      return ws.limitedUntil - second;
    }
    ws.perSecond++;
    ws.perMinute++;
    return PASS;
  }

  /** Counts a frame received before authorization completed: false when it is one too many. */
  countEarly(ws: FrameCounts): boolean {
    return ++ws.early <= PRE_AUTHORIZE_FRAMES;
  }

  /** Authorization completed: the rate windows start with the next frame. */
  start(ws: FrameCounts): void {
    ws.second = -1;
  }
}

/** The refusal of a frame past a rate limit, echoing the frame's id. */
export function rateLimitedFrame(retryAfterSeconds: number, id?: FrameId): string {
  return errorFrame('rate-limited', `Too many frames; wait ${retryAfterSeconds} s before sending again, or the socket is closed.`, { retryAfterSeconds }, id);
}
