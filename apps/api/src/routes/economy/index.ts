/**
 * Realms, inventories, balances, the ledger and currency moves (spec §4 Game services: Realms and
 * inventories, Currency moves, Definitions). The domain is apps/core/src/economy; docs/economy.md.
 */
import { Refusal } from '@hearth/core';
import {
  Balance,
  ConsumeRequest,
  CurrencyDefinition,
  CurrencyMovePath,
  CurrencyMoveRequest,
  Inventory,
  InventoryPath,
  LedgerEntry,
  LedgerQuery,
  Movement,
  Realm,
  PageOf,
  PageOnlyQuery,
  PlayerPath,
} from '@hearth/core/shapes';
import type { MoveKind } from '@hearth/core/economy';
import { type AnyRoute, BODY_LIMITS, defineRoute } from '../../http/route';
import { answeredForPlayer, listedForPlayer, playerPage, targetPlayerId } from '../players/target';
import { answerWithReplay, engineMove, inventoryPage } from './held';
import { listedForEnvironment } from '../definitions';

export const listRealms = defineRoute({
  operationId: 'listRealms',
  path: '/realms',
  summary: 'The open realms, newest first',
  description: 'Open: switched on, started and not yet ended. Newest: latest startAt, then highest number.',
  success: { status: 200, description: 'A page of realms', schema: PageOf(Realm) },
  ...listedForEnvironment({ service: 'realms', credential: 'either' }, (ctx) => ctx.core.realms.listOpen(ctx.db, ctx.env, ctx.query)),
});

export const getCurrentRealm = defineRoute({
  operationId: 'getCurrentRealm',
  method: 'GET',
  path: '/realms/current',
  summary: 'The current realm: the newest open one',
  description: 'The newest realm open now. `not-found` when none is open: between seasons, realm-scoped reads and moves are refused with `no-current-realm`.',
  tag: 'realms',
  credential: 'either',
  service: 'realms',
  success: { status: 200, description: 'The realm', schema: Realm },
  refusals: ['not-found'],
  handler: async (ctx) => {
    const realm = await ctx.core.realms.current(ctx.db, ctx.env.id);
    if (!realm) throw new Refusal('not-found', 'No realm is open now.');
    return { body: realm };
  },
});

export const listRealmDefinitions = defineRoute({
  operationId: 'listRealmDefinitions',
  path: '/definitions/realms',
  summary: 'Every realm, open or not, by number',
  description:
    "Pages through every realm the environment's manifests define, past and future ones included, by number. For game servers planning a season; players read GET /realms.",
  success: { status: 200, description: 'A page of realms', schema: PageOf(Realm) },
  ...listedForEnvironment({ service: 'realms', credential: 'server' }, (ctx) => ctx.core.realms.definitions(ctx.db, ctx.env, ctx.query)),
});

export const listCurrencyDefinitions = defineRoute({
  operationId: 'listCurrencyDefinitions',
  path: '/definitions/currencies',
  summary: 'Every currency, switched on or not, by key',
  description: 'Pages through every currency the environment defines, switched off ones included, each with its kind, its scope and its maximum.',
  success: { status: 200, description: 'A page of currency definitions', schema: PageOf(CurrencyDefinition) },
  ...listedForEnvironment({ service: 'inventory', credential: 'server' }, (ctx) => ctx.core.realms.currencyDefinitions(ctx.db, ctx.env, ctx.query)),
});

export const listInventories = defineRoute({
  ...playerPage('inventory'),
  ...listedForPlayer((ctx, playerId) => ctx.core.economy.listInventories(ctx.db, ctx.env, playerId, ctx.query)),
  operationId: 'listInventories',
  path: '/players/:playerId/inventories',
  summary: "The player's inventories, in the order they were made",
  description:
    "Pages through the player's inventories in the order they were made: the account inventory (`realmId` null) and those of realms. A player token reads its own (`me`).",
  success: { status: 200, description: 'A page of inventories', schema: PageOf(Inventory) },
  links: [{ parameters: { playerId: '$request.path.playerId', inventory: '$response.body#/items/0/id' } }],
});

export const getInventory = defineRoute({
  operationId: 'getInventory',
  method: 'GET',
  path: '/players/:playerId/inventories/:inventory',
  summary: 'One inventory: `account`, `current` (made when missing) or an id',
  description:
    "`account` is the player's inventory across realms; `current` the inventory of the realm open now, made on first read (`no-current-realm` when none is open); otherwise one of this player's inventory ids (`not-found` when it is not one).",
  tag: 'inventory',
  credential: 'either',
  service: 'inventory',
  params: InventoryPath,
  success: { status: 200, description: 'The inventory', schema: Inventory },
  refusals: ['forbidden', 'not-found', 'no-current-realm'],
  handler: async (ctx) => ({ body: await ctx.core.economy.resolve(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.inventory) }),
});

export const listBalances = inventoryPage(
  'inventory',
  {
    operationId: 'listBalances',
    path: '/players/:playerId/inventories/:inventory/balances',
    summary: "An inventory's balances by currency key, with the inventory",
    description:
      "Pages through the inventory's balances by currency key, with the inventory itself. `account`, `current` or an id, as for GET of one inventory.",
    item: Balance,
    pageOf: 'balances',
  },
  (core, ...read) => core.economy.balances(...read),
);

export const listLedger = defineRoute({
  ...playerPage('inventory'),
  operationId: 'listLedger',
  path: '/players/:playerId/ledger',
  summary: "The player's ledger, newest first",
  description:
    "Pages through every move of value on the player's currencies, newest first, optionally of one currency or inventory: the amount, the balance after it, its reason and reference. Entries are never changed or removed; a correction is a new entry.",
  success: { status: 200, description: 'A page of ledger entries', schema: PageOf(LedgerEntry) },
  ...answeredForPlayer({ params: PlayerPath, query: LedgerQuery }, (ctx, playerId) => ctx.core.economy.ledger(ctx.db, ctx.env, playerId, ctx.query)),
});

const MOVE_DESCRIPTIONS: Record<MoveKind, string> = {
  credit: 'Adds to a balance currency. `balance-cap` past its maximum.',
  debit: 'Takes from a balance currency. `insufficient-balance` (details.held, details.requested) when it holds less.',
  refund: 'Lowers what a consumed currency has spent (`insufficient-balance` below nothing), or credits a balance currency.',
  consume: 'Adds to what a consumed currency has spent; `allowance-exceeded` (details.allowance) when the total would pass `allowance`.',
};

function moveRoute(kind: MoveKind) {
  const body = kind === 'consume' ? ConsumeRequest : CurrencyMoveRequest;
  return defineRoute({
    operationId: `${kind}Currency`,
    path: `/players/:playerId/currencies/:currencyKey/${kind}`,
    summary: `${kind[0].toUpperCase()}${kind.slice(1)} a currency`,
    description: `${MOVE_DESCRIPTIONS[kind]} A retry under the same Idempotency-Key answers the first Movement with \`replayed: true\`.`,
    ...engineMove('inventory', 'server', 'required'),
    params: CurrencyMovePath,
    body,
    success: { status: 200, description: 'The Movement', schema: Movement },
    // The same player's same currency, for the moves after this one.
    links: [{ parameters: { playerId: '$request.path.playerId', currencyKey: '$request.path.currencyKey' } }],
    refusals: ['not-found', 'invalid-request', 'insufficient-balance', 'allowance-exceeded', 'balance-cap', 'disabled', 'no-current-realm'],
    handler: async (ctx) =>
      answerWithReplay(await ctx.core.economy.moveOnce(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.currencyKey, kind, ctx.body, ctx.idempotency)),
  });
}

export const creditCurrency = moveRoute('credit');
export const debitCurrency = moveRoute('debit');
export const refundCurrency = moveRoute('refund');
export const consumeCurrency = moveRoute('consume');

/** The economy area's routes: routes/index.ts registers them by this one name. */
export const economyRoutes: AnyRoute[] = [
  listRealms,
  getCurrentRealm,
  listRealmDefinitions,
  listCurrencyDefinitions,
  listInventories,
  getInventory,
  listBalances,
  listLedger,
  creditCurrency,
  debitCurrency,
  refundCurrency,
  consumeCurrency,
];
