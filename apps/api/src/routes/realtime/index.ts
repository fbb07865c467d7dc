import { PROTOCOL_VERSION, SOCKET_PATH, effectiveLimits } from '@hearth/core/sessions';
import { PlatformRealtimeInfo } from '@hearth/core/shapes';
import { defineRoute, type AnyRoute } from '../../http/route';

/**
 * GET /realtime: where the sessions socket is and the limits it holds the caller to. The address is
 * on the host and scheme the request came by (X-Forwarded-Host/Proto behind the ingress), https → wss.
 */
export const getRealtime = defineRoute({
  operationId: 'getRealtime',
  method: 'GET',
  path: '/realtime',
  summary: 'Where the sessions socket is, and its limits',
  description:
    'Open a WebSocket to `url` and first send `{ v, type: "authorize", payload: { token } }` with the player’s access token. ' +
    'Read this at game start rather than hard-coding it: the address may move and the limits follow the plan. See docs/realtime.md.',
  tag: 'sessions',
  credential: 'player',
  service: 'sessions',
  success: { status: 200, description: 'The socket’s address, protocol version and limits', schema: PlatformRealtimeInfo },
  refusals: [],
  handler: async (ctx) => {
    const scheme = ctx.request.protocol === 'https' ? 'wss' : 'ws';
    return {
      body: {
        url: `${scheme}://${ctx.request.host}${SOCKET_PATH}`,
        protocol: PROTOCOL_VERSION,
        limits: effectiveLimits(ctx.env.plan.realtime),
      },
    };
  },
});

/** The realtime area's routes: routes/index.ts registers them by this one name. */
export const realtimeRoutes: AnyRoute[] = [getRealtime];
