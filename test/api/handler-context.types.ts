/**
 * The handler context is typed by its route's credential and environment source, and a handler's
 * answer by its route's success schema (a field the schema has and the answer lacks, or of another
 * type, does not compile). Checked by
 * `npm run typecheck` (which takes test/**), not run by jest: every `Same<...>` must hold and every
 * `@ts-expect-error` must stay an error, or the typecheck fails.
 */
import { Type } from '@sinclair/typebox';
import { areaRoutes, defineRoute } from '@hearth/api';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import type { EnvironmentPrincipal, LicencePrincipal, Principal } from '@hearth/core/auth';

/** true only when A and B are the same type (`any` is the same as nothing else). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type PlayerPrincipal = Extract<Principal, { kind: 'player' }>;
type ServerPrincipal = Extract<Principal, { kind: 'server' }>;

const common = {
  method: 'POST' as 'POST' | 'GET',
  summary: 'types only',
  tag: 'reference' as const,
  success: { status: 200, description: 'ok' },
  refusals: [],
};

export const typedRoutes = [
  defineRoute({
    ...common,
    operationId: 'player',
    path: '/t/player',
    credential: 'player',
    handler: async (ctx) => {
      const principal: Same<typeof ctx.principal, PlayerPrincipal> = true;
      const env: Same<typeof ctx.env, EnvironmentContext> = true;
      return { body: [principal, env, ctx.principal.playerId, ctx.env.id] };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'server',
    path: '/t/server',
    credential: 'server',
    handler: async (ctx) => {
      const principal: Same<typeof ctx.principal, ServerPrincipal> = true;
      const env: Same<typeof ctx.env, EnvironmentContext> = true;
      // @ts-expect-error a server key names no player
      void ctx.principal.playerId;
      return { body: [principal, env, ctx.principal.keyId] };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'either',
    path: '/t/either',
    credential: 'either',
    handler: async (ctx) => {
      // A licence key and a dashboard token are refused by the pipeline here: a server key or a player remain.
      const principal: Same<typeof ctx.principal, Exclude<Principal, { kind: 'dashboard' | 'licence' }>> = true;
      const env: Same<typeof ctx.env, EnvironmentContext> = true;
      // @ts-expect-error either credential: ask its kind first
      void ctx.principal.playerId;
      return { body: [principal, env, ctx.principal.kind === 'player' ? ctx.principal.playerId : ctx.principal.keyId] };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'dashboard',
    path: '/t/dashboard',
    credential: 'either-or-dashboard',
    etag: async (ctx) => String(ctx.env.id),
    handler: async (ctx) => {
      const principal: Same<typeof ctx.principal, EnvironmentPrincipal> = true;
      const env: Same<typeof ctx.env, EnvironmentContext> = true;
      return { body: [principal, env] };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'dashboardOnly',
    path: '/t/dashboard-only',
    credential: 'dashboard',
    handler: async (ctx) => {
      const principal: Same<typeof ctx.principal, Extract<Principal, { kind: 'dashboard' }>> = true;
      const env: Same<typeof ctx.env, EnvironmentContext> = true;
      return { body: [principal, env, ctx.principal.accountId, ctx.principal.permissions] };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'licence',
    path: '/t/licence',
    credential: 'licence',
    handler: async (ctx) => {
      const principal: Same<typeof ctx.principal, LicencePrincipal> = true;
      const env: Same<typeof ctx.env, null> = true;
      // @ts-expect-error a licence key acts in no environment
      void ctx.principal.environment;
      return { body: [principal, env, ctx.principal.organisation.id] };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'none',
    path: '/t/none',
    credential: 'none',
    handler: async (ctx) => {
      const principal: Same<typeof ctx.principal, null> = true;
      const env: Same<typeof ctx.env, null> = true;
      return { body: [principal, env] };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'appKey',
    path: '/t/app-key',
    credential: 'none',
    environmentFrom: 'body-app-key',
    body: Type.Object({ appKey: Type.String() }),
    handler: async (ctx) => {
      const principal: Same<typeof ctx.principal, null> = true;
      const env: Same<typeof ctx.env, EnvironmentContext> = true;
      return { body: [principal, env, ctx.env.id] };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'late',
    path: '/t/late',
    credential: 'none',
    environmentFrom: 'handler',
    handler: async (ctx) => {
      const env: Same<typeof ctx.env, null> = true;
      return { body: env };
    },
  }),
];

/**
 * The answers of routes with a success schema: its Static<>. (A field beyond the schema is not a
 * compile error: TypeScript checks excess fields only of object literals typed directly; the contract
 * test refuses such an answer, every schema being closed.)
 */
const Answer = Type.Object({ id: Type.String(), count: Type.Integer() }, { additionalProperties: false });
const answering = { ...common, path: '/t/answer', credential: 'none' as const, success: { status: 200, description: 'ok', schema: Answer } };
export const answeringRoutes = [
  defineRoute({ ...answering, operationId: 'exact', handler: async () => ({ body: { id: 'a', count: 1 } }) }),
  // @ts-expect-error a field of the schema is missing from the answer
  defineRoute({ ...answering, operationId: 'lacking', handler: async () => ({ body: { id: 'a' } }) }),
  // @ts-expect-error a field of another type
  defineRoute({ ...answering, operationId: 'mistyped', handler: async () => ({ body: { id: 'a', count: '1' } }) }),
];

/** A route names its tag (its group in the OpenAPI document), or its area's definer gives it. */
const { tag, ...untagged } = answering;
const answersRoute = areaRoutes({ tag });
export const taggedRoutes = [
  // @ts-expect-error a route outside an area names its tag
  defineRoute({ ...untagged, operationId: 'untagged', handler: async () => ({ body: { id: 'a', count: 1 } }) }),
  answersRoute({ ...untagged, operationId: 'area', handler: async () => ({ body: { id: 'a', count: 1 } }) }),
  // @ts-expect-error an area's route is typed as any other: a field of another type
  answersRoute({ ...untagged, operationId: 'area-mistyped', handler: async () => ({ body: { id: 'a', count: '1' } }) }),
];
