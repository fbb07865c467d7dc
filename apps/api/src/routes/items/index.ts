import { ItemTypeDefinition } from '@hearth/core/shapes';
import { definitionsPage } from '../definitions';

export const listItemTypeDefinitions = definitionsPage(
  'inventory',
  {
    operationId: 'listItemTypeDefinitions',
    path: '/definitions/item-types',
    summary: "The environment's item types, ordered by key",
    description: 'Switched-off item types are listed with `enabled: false`; deleted ones are not listed.',
    item: ItemTypeDefinition,
    pageOf: 'item type definitions',
  },
  { etag: (ctx, ask) => ctx.core.itemTypes.etag(ctx.env.id, ask), list: (ctx) => ctx.core.itemTypes.listDefinitions(ctx.env, ctx.query) },
);
