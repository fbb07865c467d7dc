import { ItemTypeDefinition } from '@hearth/core/shapes';
import type { AnyRoute } from '../../http/route';
import { definitionsPage } from '../definitions';
import { consumeItem, consumeItemStack, grantItems, listItems, listItemStacks, openItem, useItem, useItemStack } from './held';
import { purchaseItems } from './purchases';

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

/** The items area's routes: routes/index.ts registers them by this one name. */
export const itemRoutes: AnyRoute[] = [
  listItemTypeDefinitions,
  listItems,
  listItemStacks,
  grantItems,
  consumeItem,
  consumeItemStack,
  useItem,
  useItemStack,
  openItem,
  purchaseItems,
];
