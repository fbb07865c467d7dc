/**
 * What every page of a content area's definitions declares alike (GET /definitions/item-types,
 * card-types, card-templates, skill-trees): a game server's read (server key) of the environment's
 * definitions by key, a conditional read whose ETag is the area's content version, no refusals of
 * its own. Each area gives its words, its schema and its two reads.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { Page, ServiceName } from '@hearth/core';
import { BODY_LIMITS, defineRoute, type HandlerContext } from '../http/route';
import { PageOf, PageOnlyQuery } from '../http/schema-helpers';

/** What the reads of a definitions page see: the page query, a server key. */
type DefinitionsContext = HandlerContext<unknown, Static<typeof PageOnlyQuery>, unknown, 'server'>;

export function definitionsPage(
  service: ServiceName,
  route: { operationId: string; path: string; summary: string; description: string; item: TSchema; pageOf: string },
  read: { etag: (ctx: DefinitionsContext, ask: string) => Promise<string>; list: (ctx: DefinitionsContext) => Promise<Page<unknown>> },
) {
  return defineRoute({
    operationId: route.operationId,
    method: 'GET',
    path: route.path,
    summary: route.summary,
    description: route.description,
    tag: 'definitions',
    credential: 'server',
    service,
    query: PageOnlyQuery,
    etag: read.etag,
    bodyLimit: BODY_LIMITS.gameService,
    success: { status: 200, description: `A page of ${route.pageOf}`, schema: PageOf(route.item) },
    refusals: [],
    handler: async (ctx) => ({ body: await read.list(ctx) }),
  });
}
