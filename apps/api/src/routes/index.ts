import type { AnyRoute } from '../http/route';
import type { ApiDocumentAbout } from '@hearth/core';
import { buildOpenApi, type OpenApiDocument } from '../http/openapi';
import { getJwks, openApiRoute } from './reference';
import { authRoutes } from './auth';
import { playerRoutes } from './players';
import { configRoutes } from './config';
import { realtimeRoutes } from './realtime';
import { blogRoutes } from './blog';
import { sessionRoutes } from './sessions';
import { legalRoutes } from './legal';
import { tourRoutes } from './tours';
import { saveRoutes } from './saves';
import { supportRoutes } from './support';
import {
  consumeCurrency,
  creditCurrency,
  debitCurrency,
  getCurrentRealm,
  getInventory,
  listBalances,
  listCurrencyDefinitions,
  listInventories,
  listLedger,
  listRealmDefinitions,
  listRealms,
  refundCurrency,
} from './economy';
import { listItemTypeDefinitions } from './items';
import { consumeItem, consumeItemStack, grantItems, listItems, listItemStacks, openItem, useItem, useItemStack } from './items/held';
import { purchaseItems } from './items/purchases';
import { cardRoutes } from './cards';
import { deleteUnlock, listUnlocks, recordUnlock } from './progression';
import { getPlayerSkillTree, listPlayerSkillTrees, listSkillTreeDefinitions, unlockSkillNode } from './progression/skill-trees';
import { addXp, listXp } from './progression/xp';
import { statRoutes } from './stats';
import { crashRoutes } from './crashes';
import { licenceRoutes } from './licence';
import { dashboardRoutes } from './dashboards';
import { commerceRoutes } from './commerce';

/**
 * The route table: every route of the API, in the order of the spec's summary table, which is the
 * order of the OpenAPI document's paths. An area whose routes sit together there is registered by
 * one line, its list (routes/<area>/index.ts); economy, items and progression interleave (their
 * definitions, inventories and moves are grouped across the three), so they are listed route by route.
 */
export function routeTable(extra: AnyRoute[] = [], about?: ApiDocumentAbout): AnyRoute[] {
  let document: OpenApiDocument | undefined;
  const routes: AnyRoute[] = [
    openApiRoute(() => (document ??= buildOpenApi(routes, about))),
    ...authRoutes,
    getJwks,
    ...playerRoutes,
    ...configRoutes,
    ...realtimeRoutes,
    ...sessionRoutes,
    ...legalRoutes,
    ...tourRoutes,
    ...blogRoutes,
    ...supportRoutes,
    ...saveRoutes,
    ...crashRoutes,
    ...commerceRoutes,
    listRealms,
    getCurrentRealm,
    listRealmDefinitions,
    listCurrencyDefinitions,
    listItemTypeDefinitions,
    listSkillTreeDefinitions,
    listInventories,
    getInventory,
    listBalances,
    listItems,
    listItemStacks,
    listLedger,
    creditCurrency,
    debitCurrency,
    refundCurrency,
    consumeCurrency,
    grantItems,
    consumeItem,
    consumeItemStack,
    useItem,
    useItemStack,
    openItem,
    purchaseItems,
    ...cardRoutes,
    listUnlocks,
    recordUnlock,
    deleteUnlock,
    listXp,
    addXp,
    listPlayerSkillTrees,
    getPlayerSkillTree,
    unlockSkillNode,
    ...statRoutes,
    ...licenceRoutes,
    ...dashboardRoutes,
    ...extra,
  ];
  return routes;
}
