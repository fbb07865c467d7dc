import { IdpSignInRequest, PlatformTokens, RefreshRequest, ServerSignInRequest } from '@hearth/core/shapes';
import { type AnyRoute, BODY_LIMITS } from '../../http/route';
import { authRoute } from './area';

const signInAnswers = {
  status: 201,
  description: 'Signed in; the player was made',
  schema: PlatformTokens,
  also: [{ status: 200, description: 'Signed in; the player was found' }],
};

export const signInServer = authRoute({
  operationId: 'signInServer',
  method: 'POST',
  path: '/auth/server',
  summary: "Sign a player in on a game server's word",
  description:
    "For a game server that has already established who the player is: the server key vouches for `subject`, the server's own id for the player. Made on first sight (201), found afterwards (200); `displayName` replaces the name when sent. A new player past the plan's cap is refused with `conflict`.",
  credential: 'server',
  body: ServerSignInRequest,
  bodyLimit: BODY_LIMITS.signIn,
  success: signInAnswers,
  links: [{ parameters: { playerId: '$response.body#/player/id' } }],
  refusals: ['conflict', 'quota-exceeded'],
  handler: async (ctx) => {
    const { env } = ctx;
    const { player, created, tokensValidAfter } = await ctx.core.players.signIn(ctx.db, env, 'server', ctx.body.subject, ctx.body.displayName);
    const tokens = await ctx.core.tokens.issue(player.id, env.appKey, tokensValidAfter);
    return { status: created ? 201 : 200, body: { ...tokens, player } };
  },
});

export const signInIdp = authRoute({
  operationId: 'signInIdp',
  method: 'POST',
  path: '/auth/idp',
  summary: "Sign a player in with the identity provider's Connect id token",
  description:
    "Needs no credential: the id token proves the player. A product user seen for the first time is made (201), afterwards found (200). Refused with `provider-disabled` when the environment's identity provider is off or not set up, `unauthorized` when the token cannot be verified or is for another deployment, and `conflict` for a new player when the environment holds its plan's most players.",
  credential: 'none',
  environmentFrom: 'body-app-key',
  rateLimit: 'idp-sign-in',
  body: IdpSignInRequest,
  bodyLimit: BODY_LIMITS.signIn,
  success: signInAnswers,
  links: [{ parameters: { playerId: '$response.body#/player/id' } }],
  refusals: ['provider-disabled', 'unauthorized', 'conflict', 'quota-exceeded', 'unavailable'],
  handler: async (ctx) => {
    const { env } = ctx;
    const { subject } = await ctx.core.idp.verify(env, ctx.body.idToken);
    // Once its token is checked, the sign-in counts against its environment's limits (spec §8).
    await ctx.enterEnvironment(env, `idp:${subject}`);
    const { player, created, tokensValidAfter } = await ctx.core.players.signIn(ctx.db, env, 'idp', subject);
    const tokens = await ctx.core.tokens.issue(player.id, env.appKey, tokensValidAfter);
    return { status: created ? 201 : 200, body: { ...tokens, player } };
  },
});

export const refreshTokens = authRoute({
  operationId: 'refreshTokens',
  method: 'POST',
  path: '/auth/refresh',
  summary: 'Exchange a refresh token for new tokens',
  description: 'A refresh token works once; presented again within 60 seconds it answers what it answered the first time.',
  credential: 'none',
  environmentFrom: 'handler',
  body: RefreshRequest,
  bodyLimit: BODY_LIMITS.signIn,
  success: { status: 200, description: 'New tokens', schema: PlatformTokens },
  links: [{ parameters: { playerId: '$response.body#/player/id' } }],
  refusals: ['unauthorized'],
  handler: async (ctx) => {
    // The refresh counts with the player's access tokens: one credential per player (spec §8).
    const tokens = await ctx.core.refresh.refresh(ctx.db, ctx.body.refreshToken, (env, playerId) => ctx.enterEnvironment(env, `p:${playerId}`));
    return { body: tokens };
  },
});

/** The auth area's routes: routes/index.ts registers them by this one name. */
export const authRoutes: AnyRoute[] = [signInIdp, refreshTokens, signInServer];
