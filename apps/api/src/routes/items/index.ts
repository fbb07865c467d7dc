import { ItemTypeDefinition } from '@hearth/core/shapes';
import { BODY_LIMITS, defineRoute } from '../../http/route';
import { PageOf, PageOnlyQuery } from '../../http/schema-helpers';

export const listItemTypeDefinitions = defineRoute({
  operationId: 'listItemTypeDefinitions',
  method: 'GET',
  path: '/definitions/item-types',
  summary: "The environment's item types, ordered by key",
  description: 'Switched-off item types are listed with `enabled: false`; deleted ones are not listed.',
  tag: 'definitions',
  credential: 'server',
  service: 'inventory',
  query: PageOnlyQuery,
  etag: (ctx, ask) => ctx.core.itemTypes.etag(ctx.env.id, ask),
  bodyLimit: BODY_LIMITS.gameService,
  success: { status: 200, description: 'A page of item type definitions', schema: PageOf(ItemTypeDefinition) },
  refusals: [],
  handler: async (ctx) => ({ body: await ctx.core.itemTypes.listDefinitions(ctx.env, ctx.query) }),
});
