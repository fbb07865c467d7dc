/**
 * What every page of a content area's definitions declares alike (GET /definitions/item-types,
 * card-types, card-templates, skill-trees): a game server's read (server key) of the environment's
 * definitions by key, a conditional read whose ETag is the area's content version, no refusals of
 * its own. Each area gives its words, its schema and its two reads.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { ErrorCode, Page } from '@hearth/core';
import type { ServiceName } from '@hearth/core/contract';
import { BODY_LIMITS, defineRoute, type HandlerContext } from '../http/route';
import type { ApiTag } from '../http/tags';
import { PageOf, PageOnlyQuery } from '@hearth/core/shapes';

/** What the handler of a page of the environment's things sees: the page query, a game's credential (no path). */
type EnvironmentPageContext = HandlerContext<unknown, Static<typeof PageOnlyQuery>, unknown, 'either' | 'server'>;

/**
 * A page of the environment's own things (realms, definitions, unacknowledged grants...): a GET with
 * the page query, no refusals of its own, `list`'s page as the answer, in its service's tag unless
 * another is named. Spread it into defineRoute and give the rest.
 */
export function listedForEnvironment<P extends Page<unknown>>(
  access: { service: ServiceName & ApiTag; credential: 'server' | 'either' } | { service: ServiceName; credential: 'server' | 'either'; tag: ApiTag },
  list: (ctx: EnvironmentPageContext) => Promise<P>,
) {
  return {
    method: 'GET' as const,
    tag: 'tag' in access ? access.tag : access.service,
    credential: access.credential,
    service: access.service,
    query: PageOnlyQuery,
    refusals: [] as ErrorCode[],
    handler: async (ctx: EnvironmentPageContext) => ({ body: await list(ctx) }),
  };
}

export function definitionsPage(
  service: ServiceName,
  route: { operationId: string; path: string; summary: string; description: string; item: TSchema; pageOf: string },
  read: { etag: (ctx: EnvironmentPageContext, ask: string) => Promise<string>; list: (ctx: EnvironmentPageContext) => Promise<Page<unknown>> },
) {
  return defineRoute({
    operationId: route.operationId,
    path: route.path,
    summary: route.summary,
    description: route.description,
    etag: read.etag,
    success: { status: 200, description: `A page of ${route.pageOf}`, schema: PageOf(route.item) },
    ...listedForEnvironment({ service, credential: 'server', tag: 'definitions' }, read.list),
  });
}
