/**
 * Custom dashboards (spec §4 "Custom dashboards"; docs/dashboards.md): a person's sign-in through the
 * project's OpenID Connect provider, the token's session, and the players list only a dashboard reads.
 */
import { DashboardPlayer, DashboardSession, DashboardSignInRequest, DashboardTokens, PlayerSearchQuery, PageOf } from '@hearth/core/shapes';
import { type AnyRoute, BODY_LIMITS } from '../../http/route';
import { dashboardsRoute } from './area';

export const signInDashboard = dashboardsRoute({
  operationId: 'signInDashboard',
  method: 'POST',
  path: '/auth/dashboard',
  summary: "Sign a person in to a project's custom dashboard",
  description:
    "Exchanges an authorization code of the project's OpenID Connect provider (PKCE) for a dashboard token of the environment. " +
    "not-found: the environment's project has no dashboard; unauthorized: the code is bad, used, or for another sign-in; " +
    'forbidden: the person may not open the dashboard there, or their account is closed; unavailable: this deployment hosts no custom dashboards.',
  credential: 'none',
  environmentFrom: 'handler',
  // The page that finishes a person's sign-in is the dashboard's (its redirect URI's origin).
  pages: ['dashboard'],
  body: DashboardSignInRequest,
  bodyLimit: BODY_LIMITS.signIn,
  success: { status: 200, description: 'Signed in', schema: DashboardTokens },
  refusals: ['not-found', 'unauthorized', 'forbidden', 'unavailable'],
  handler: async (ctx) => {
    const env = await ctx.core.dashboards.environmentForSignIn(ctx.body.appKey);
    // Counted against the environment and held to its review before the code is spent.
    await ctx.enterEnvironment(env, 'd:sign-in');
    const { appKey: _appKey, ...exchange } = ctx.body;
    return { body: await ctx.core.dashboards.signIn(ctx.db, env, exchange) };
  },
});

export const getDashboardSession = dashboardsRoute({
  operationId: 'getDashboardSession',
  method: 'GET',
  path: '/dashboard/session',
  summary: "The dashboard token's account and permissions",
  description:
    "What the dashboard token stands for: the environment's app key, the signed-in account, and the permissions it holds there, so a dashboard shows only what its member may do.",
  credential: 'dashboard',
  dashboardPermission: 'open_dashboard',
  success: { status: 200, description: 'The session', schema: DashboardSession },
  refusals: [],
  handler: async (ctx) => ({ body: ctx.core.dashboards.session(ctx.principal) }),
});

export const listPlayersForDashboard = dashboardsRoute({
  operationId: 'listPlayers',
  method: 'GET',
  path: '/players',
  summary: "The environment's players, newest first",
  description: "`q` finds part of a display name (any position, any case), or a player's id or an identity's subject exactly; never an e-mail.",
  credential: 'dashboard',
  dashboardPermission: 'view_players',
  query: PlayerSearchQuery,
  success: { status: 200, description: 'A page of players', schema: PageOf(DashboardPlayer) },
  refusals: [],
  handler: async (ctx) => ({ body: await ctx.core.dashboards.listPlayers(ctx.db, ctx.env, ctx.query) }),
});

/** The dashboards area's routes: routes/index.ts registers them by this one name. */
export const dashboardRoutes: AnyRoute[] = [signInDashboard, getDashboardSession, listPlayersForDashboard];
