import type { AnyRoute } from '../http/route';
import { buildOpenApi, type OpenApiDocument } from '../http/openapi';
import { getJwks, openApiRoute } from './reference';
import { refreshTokens, signInIdp, signInServer } from './auth';
import { deletePlayer, getPlayer, renamePlayer, signOutPlayer } from './players';
import { getConfigTable, listConfigTables, listConfigValues, listFlags } from './config';
import { getRealtime } from './realtime';
import { getBlogPost, listBlogCategories, listBlogPosts, listBlogTags } from './blog';
import {
  createSession,
  getSession,
  joinSession,
  kickSessionPlayer,
  leaveSession,
  promoteSessionPlayer,
  readySession,
  reportSessionStatus,
} from './sessions';
import { acceptLegal, getLegalStanding, listLegalDocuments, listOutstandingLegal } from './legal';
import { completeTour, listTours } from './tours';
import { deleteSave, getSave, listSaves, putSave } from './saves';
import { createPlayerReport, createSupportRequest } from './support';
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
import { deleteUnlock, listUnlocks, recordUnlock } from './progression';
import { createSymbolUpload, listSymbolFiles } from './crashes/symbols';
import { uploadCrashReport } from './crashes/uploads';
import { getDashboardSession, listPlayersForDashboard, signInDashboard } from './dashboards';

/** The route table: every route of the API, in the order of the spec's summary table. */
export function routeTable(extra: AnyRoute[] = []): AnyRoute[] {
  let document: OpenApiDocument | undefined;
  const routes: AnyRoute[] = [
    openApiRoute(() => (document ??= buildOpenApi(routes))),
    signInIdp,
    refreshTokens,
    signInServer,
    getJwks,
    getPlayer,
    renamePlayer,
    deletePlayer,
    signOutPlayer,
    listConfigValues,
    listConfigTables,
    getConfigTable,
    listFlags,
    getRealtime,
    createSession,
    getSession,
    joinSession,
    leaveSession,
    readySession,
    kickSessionPlayer,
    promoteSessionPlayer,
    reportSessionStatus,
    listLegalDocuments,
    getLegalStanding,
    listOutstandingLegal,
    acceptLegal,
    listTours,
    completeTour,
    listBlogPosts,
    getBlogPost,
    listBlogCategories,
    listBlogTags,
    createSupportRequest,
    createPlayerReport,
    listSaves,
    getSave,
    putSave,
    deleteSave,
    uploadCrashReport,
    createSymbolUpload,
    listSymbolFiles,
    listRealms,
    getCurrentRealm,
    listRealmDefinitions,
    listCurrencyDefinitions,
    listItemTypeDefinitions,
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
    listUnlocks,
    recordUnlock,
    deleteUnlock,
    signInDashboard,
    getDashboardSession,
    listPlayersForDashboard,
    ...extra,
  ];
  return routes;
}
