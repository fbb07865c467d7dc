/**
 * The sessions socket (docs/realtime.md): what GET /realtime answers, declared once for the route and
 * the document. The figures are the plan's realtime limits (sessions/socket.ts effectiveLimits).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Shape } from './common';

const Count = (description: string) => Type.Integer({ minimum: 1, description });

export const PlatformRealtimeInfo = Shape('PlatformRealtimeInfo', {
  url: Type.String({ description: 'the sessions socket address on the API’s own host (wss behind https)' }),
  protocol: Type.Integer({ description: 'the protocol version, carried as `v` in every frame' }),
  limits: Type.Object(
    {
      maxMessageBytes: Count('largest frame a client may send, in bytes; a larger one closes the socket with 1009'),
      messagesPerSecond: Count('client frames a clock second per socket'),
      messagesPerMinute: Count('client frames a clock minute per socket'),
      maxSubscriptions: Count('sessions a socket may follow through subscribe besides those it holds a seat in'),
    },
    { additionalProperties: false },
  ),
});
export type PlatformRealtimeInfo = Static<typeof PlatformRealtimeInfo>;
