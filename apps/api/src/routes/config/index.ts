import { ConfigRow, ConfigTable, ConfigTablePath, ConfigValuesQuery, Flag, PageOf, PageOnlyQuery } from '@hearth/core/shapes';
import type { Queryable } from '@hearth/core/db';
import { defineRoute, type HandlerContext, type AnyRoute } from '../../http/route';

/** Every conditional read's ETag: the environment's content version and exactly what was asked. */
function contentEtag(ctx: HandlerContext<unknown, unknown, unknown, 'either-or-dashboard'>, ask: string): Promise<string> {
  return ctx.core.gameConfig.etag(ctx.env.id, ask);
}

/** What every read of game config and flags declares alike: a GET of its service (its tag too) for any credential that reads content, conditional on its ETag. */
const contentRead = <S extends 'config' | 'flags'>(service: S) =>
  ({ method: 'GET', tag: service, credential: 'either-or-dashboard', service, etag: contentEtag }) as const;

/** A conditional read's answer: the body and its ETag read from one snapshot (never a new body under an old ETag). */
async function snapshotAnswer<T>(
  ctx: HandlerContext<unknown, unknown, unknown, 'either-or-dashboard'>,
  read: (db: Queryable) => Promise<T>,
): Promise<{ body: T; headers: Record<string, string> }> {
  const { body, etag } = await ctx.core.gameConfig.snapshot(ctx.db, ctx.env.id, ctx.ask, read);
  return { body, headers: { ETag: etag } };
}

export const listConfigValues = defineRoute({
  ...contentRead('config'),
  operationId: 'listConfigValues',
  path: '/config/values',
  summary: 'Config values, ordered by key',
  description:
    "Pages through the environment's config values (optionally one group), as its manifests set them. The answer carries an ETag: send it back in If-None-Match and an unchanged page answers 304 with no body.",
  query: ConfigValuesQuery,
  success: { status: 200, description: 'A page of config values', schema: PageOf(ConfigRow) },
  refusals: [],
  handler: (ctx) => snapshotAnswer(ctx, (db) => ctx.core.gameConfig.listValues(db, ctx.env, ctx.query)),
});

export const listConfigTables = defineRoute({
  ...contentRead('config'),
  operationId: 'listConfigTables',
  path: '/config/tables',
  summary: 'Config tables, ordered by key',
  description:
    "Pages through the environment's config tables, each whole: its columns and its rows. Cached by ETag: If-None-Match with the last ETag answers 304 while nothing changed.",
  query: PageOnlyQuery,
  success: { status: 200, description: 'A page of config tables', schema: PageOf(ConfigTable) },
  links: [{ to: ['getConfigTable'], parameters: { key: '$response.body#/items/0/key' } }],
  refusals: [],
  handler: (ctx) => snapshotAnswer(ctx, (db) => ctx.core.gameConfig.listTables(db, ctx.env, ctx.query)),
});

export const getConfigTable = defineRoute({
  ...contentRead('config'),
  operationId: 'getConfigTable',
  path: '/config/tables/:key',
  summary: 'One config table',
  description:
    'One config table by key, with its rows. `not-found` names the key when the environment has no such table. Cached by ETag (304 while unchanged).',
  params: ConfigTablePath,
  success: { status: 200, description: 'The table', schema: ConfigTable },
  refusals: ['not-found'],
  handler: (ctx) => snapshotAnswer(ctx, (db) => ctx.core.gameConfig.getTable(db, ctx.env, ctx.params.key)),
});

export const listFlags = defineRoute({
  ...contentRead('flags'),
  operationId: 'listFlags',
  path: '/flags',
  summary: 'Feature flags, ordered by name',
  description: "Pages through the environment's feature flags, each on or off. Cached by ETag (304 while unchanged).",
  query: PageOnlyQuery,
  success: { status: 200, description: 'A page of flags', schema: PageOf(Flag) },
  refusals: [],
  handler: (ctx) => snapshotAnswer(ctx, (db) => ctx.core.gameConfig.listFlags(db, ctx.env, ctx.query)),
});

/** The config area's routes: routes/index.ts registers them by this one name. */
export const configRoutes: AnyRoute[] = [listConfigValues, listConfigTables, getConfigTable, listFlags];
