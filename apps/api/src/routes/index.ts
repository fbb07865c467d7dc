import type { AnyRoute } from '../http/route';
import type { ApiDocumentAbout } from '@hearth/core';
import { buildOpenApi, type OpenApiDocument } from '../http/openapi';
import { getJwks, openApiRoute } from './reference';
import { refreshTokens, signInIdp, signInServer } from './auth';
import { deletePlayer, getPlayer, renamePlayer, signOutPlayer } from './players';
import { getConfigTable, listConfigTables, listConfigValues, listFlags } from './config';
import { getRealtime } from './realtime';
import { getBlogPost, listBlogCategories, listBlogPosts, listBlogTags } from './blog';
import { createSession, getSession, joinSession, kickSessionPlayer, leaveSession, promoteSessionPlayer, readySession, reportSessionStatus } from './sessions';
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
import { listCardTemplateDefinitions, listCardTypeDefinitions } from './cards/definitions';
import { consumeCard, consumeCardStack, grantCard, grantCardStack, listCardStacks, listCards } from './cards/held';
import { purchaseCards } from './cards/purchases';
import { createDeck, deleteDeck, getDeck, listDecks, putDeckCard, renameDeck, setDeckType, takeDeckCard, validateDeck } from './cards/decks';
import { deleteUnlock, listUnlocks, recordUnlock } from './progression';
import { getPlayerSkillTree, listPlayerSkillTrees, listSkillTreeDefinitions, unlockSkillNode } from './progression/skill-trees';
import { addXp, listXp } from './progression/xp';
import { incrementPlayerStat, incrementStat, listPlayerStats, listStats } from './stats';
import { createSymbolUpload, listSymbolFiles } from './crashes/symbols';
import { uploadCrashReport } from './crashes/uploads';
import { activateLicence, checkLicence, getLicenceJwks, releaseLicence } from './licence';
import { getDashboardSession, listPlayersForDashboard, signInDashboard } from './dashboards';
import {
  acknowledgeGrant,
  authorizeOrder,
  createOrder,
  getCatalog,
  identifyStoreAccount,
  listEntitlements,
  listGrantChanges,
  listGrants,
  reconcileOrders,
} from './commerce';

/** The route table: every route of the API, in the order of the spec's summary table. */
export function routeTable(extra: AnyRoute[] = [], about?: ApiDocumentAbout): AnyRoute[] {
  let document: OpenApiDocument | undefined;
  const routes: AnyRoute[] = [
    openApiRoute(() => (document ??= buildOpenApi(routes, about))),
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
    getCatalog,
    createOrder,
    identifyStoreAccount,
    authorizeOrder,
    reconcileOrders,
    listEntitlements,
    listGrants,
    listGrantChanges,
    acknowledgeGrant,
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
    // cards
    listCardTypeDefinitions,
    listCardTemplateDefinitions,
    listCards,
    listCardStacks,
    purchaseCards,
    grantCard,
    consumeCard,
    grantCardStack,
    consumeCardStack,
    listDecks,
    createDeck,
    getDeck,
    renameDeck,
    deleteDeck,
    putDeckCard,
    takeDeckCard,
    setDeckType,
    validateDeck,
    listUnlocks,
    recordUnlock,
    deleteUnlock,
    listXp,
    addXp,
    listPlayerSkillTrees,
    getPlayerSkillTree,
    unlockSkillNode,
    listPlayerStats,
    listStats,
    incrementPlayerStat,
    incrementStat,
    getLicenceJwks,
    activateLicence,
    checkLicence,
    releaseLicence,
    signInDashboard,
    getDashboardSession,
    listPlayersForDashboard,
    ...extra,
  ];
  return routes;
}
