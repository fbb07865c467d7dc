/**
 * What the API and the realtime process agree on about the sessions socket (protocol version 1):
 * the version, where it is served, and the limits a socket lives by. The rest of the protocol is in
 * apps/realtime/src/protocol.ts and docs/realtime.md.
 */
import type { PlanLimits } from '../contract/resources';

export const PROTOCOL_VERSION = 1;
/** Where the socket is served: on the API's host (the ingress sends this path to the realtime pods). */
export const SOCKET_PATH = '/v1/realtime/socket';

/**
 * The largest frame any socket may send, whatever its plan says: the `ws` payload limit, enforced
 * while a frame is read (before the plan is known, and so that no plan makes a process buffer more).
 */
export const MAX_FRAME_BYTES = 64 * 1024;
export type RealtimeLimits = PlanLimits['realtime'];

/** The limits a socket of this plan lives by, as GET /realtime reports them and the server enforces them. */
export function effectiveLimits(plan: RealtimeLimits): RealtimeLimits {
  return {
    maxMessageBytes: Math.min(plan.maxMessageBytes, MAX_FRAME_BYTES),
    messagesPerSecond: plan.messagesPerSecond,
    messagesPerMinute: plan.messagesPerMinute,
    maxSubscriptions: plan.maxSubscriptions,
  };
}
