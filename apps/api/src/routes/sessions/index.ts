import type { AnyRoute } from '../../http/route';
import { CreateSessionRequest, PlatformSession, ReadyRequest, SeatPath, SeatRequest, SessionPath, StatusReport } from '@hearth/core/shapes';
import { sessionsRoute } from './area';

export const createSession = sessionsRoute({
  operationId: 'createSession',
  method: 'POST',
  path: '/sessions',
  summary: 'Make a session, seated as its host',
  description:
    'The caller makes a lobby in CONFIGURING and takes its first seat as host. Every change to it reaches the players seated in it, and any socket subscribed to it, on the sessions socket.',
  credential: 'player',
  body: CreateSessionRequest,
  success: { status: 201, description: 'The session, in CONFIGURING', schema: PlatformSession },
  links: [
    // The host's seat to the routes on a seat, then the session to the rest.
    { parameters: { sessionId: '$response.body#/id', playerId: '$response.body#/players/0/playerId' } },
    { parameters: { sessionId: '$response.body#/id' } },
  ],
  refusals: [],
  handler: async (ctx) => ({
    status: 201,
    body: await ctx.core.sessions.create(ctx.db, ctx.env, ctx.principal.playerId, ctx.body),
  }),
});

export const getSession = sessionsRoute({
  operationId: 'getSession',
  method: 'GET',
  path: '/sessions/:sessionId',
  summary: 'Read a session',
  description: 'A player token reads any session of its environment.',
  credential: 'either',
  params: SessionPath,
  success: { status: 200, description: 'The session', schema: PlatformSession },
  refusals: ['not-found'],
  handler: async (ctx) => ({ body: await ctx.core.sessions.get(ctx.db, ctx.env, ctx.params.sessionId) }),
});

/** What the acts of the caller on their own seat declare alike (join, leave, ready): a player's POST on the session its path names. */
const callerSeatAct = { method: 'POST', credential: 'player', params: SessionPath } as const;

export const joinSession = sessionsRoute({
  ...callerSeatAct,
  operationId: 'joinSession',
  path: '/sessions/:sessionId/join',
  summary: 'Take a seat in a session',
  description: 'Send `{}` when giving neither field. A full session is refused with `conflict` and `details.limit` (its seats).',
  body: SeatRequest,
  success: { status: 200, description: 'The session with the caller seated', schema: PlatformSession },
  refusals: ['not-found', 'conflict'],
  handler: async (ctx) => ({
    body: await ctx.core.sessions.join(ctx.db, ctx.env, ctx.params.sessionId, ctx.principal.playerId, ctx.body),
  }),
});

export const leaveSession = sessionsRoute({
  ...callerSeatAct,
  operationId: 'leaveSession',
  path: '/sessions/:sessionId/leave',
  summary: "Give up the caller's seat",
  description:
    'Allowed in any status; any body is ignored. The host role is not passed on. A lobby in CONFIGURING that its last player leaves is closed (see docs/sessions.md).',
  bodyMode: 'ignored',
  success: { status: 204, description: 'Seat given up' },
  refusals: ['not-found'],
  handler: async (ctx) => {
    await ctx.core.sessions.leave(ctx.db, ctx.env, ctx.params.sessionId, ctx.principal.playerId);
    return {};
  },
});

export const readySession = sessionsRoute({
  ...callerSeatAct,
  operationId: 'readySession',
  path: '/sessions/:sessionId/ready',
  summary: "Set the caller's ready flag",
  description: 'When the caller readies and every other seated player is ready, the session moves to PREPARING_INSTANCE and the answer shows it.',
  body: ReadyRequest,
  success: { status: 200, description: 'The session', schema: PlatformSession },
  refusals: ['not-found', 'conflict'],
  handler: async (ctx) => ({
    body: await ctx.core.sessions.setReady(ctx.db, ctx.env, ctx.params.sessionId, ctx.principal.playerId, ctx.body.isReady),
  }),
});

/** The host's acts on another seat (kick, promote): one shape; `act` names the path's last part and the sessions method. */
function hostAction(operationId: string, act: 'kick' | 'promote', summary: string, answered: string) {
  return sessionsRoute({
    operationId,
    method: 'POST',
    path: `/sessions/:sessionId/players/:playerId/${act}`,
    summary,
    description:
      `${summary}, only while the session is in CONFIGURING (\`forbidden\` for a caller who is not host). ` +
      '`not-found` when there is no such session or the caller holds no seat in it; `conflict` when the target holds no seat or the session has moved on.',
    credential: 'player',
    params: SeatPath,
    success: { status: 200, description: answered, schema: PlatformSession },
    refusals: ['not-found', 'forbidden', 'conflict'],
    handler: async (ctx) => ({
      body: await ctx.core.sessions[act](ctx.db, ctx.env, ctx.params.sessionId, ctx.principal.playerId, ctx.params.playerId),
    }),
  });
}

export const kickSessionPlayer = hostAction('kickSessionPlayer', 'kick', 'The host takes a seat away', 'The session without the player');
export const promoteSessionPlayer = hostAction('promoteSessionPlayer', 'promote', 'The host makes another seated player host', 'The session with its new host');

export const reportSessionStatus = sessionsRoute({
  operationId: 'reportSessionStatus',
  method: 'POST',
  path: '/sessions/:sessionId/status',
  summary: "A game server reports the session's status",
  description:
    'Moves of spec §3 only; any other move, or a report that another report beat to it, is `conflict`. `conclusion` is kept with COMPLETE; `error` is kept with ERROR for staff and never answered.',
  credential: 'server',
  params: SessionPath,
  body: StatusReport,
  success: { status: 200, description: 'The session', schema: PlatformSession },
  refusals: ['not-found', 'conflict'],
  handler: async (ctx) => ({ body: await ctx.core.sessions.reportStatus(ctx.db, ctx.env, ctx.params.sessionId, ctx.body) }),
});

/** The sessions area's routes: routes/index.ts registers them by this one name. */
export const sessionRoutes: AnyRoute[] = [
  createSession,
  getSession,
  joinSession,
  leaveSession,
  readySession,
  kickSessionPlayer,
  promoteSessionPlayer,
  reportSessionStatus,
];
