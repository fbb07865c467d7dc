/**
 * What the routes of value held in inventories declare alike (balances, items, cards; docs/economy.md,
 * docs/cards.md): the page of what one inventory holds, and a move of the money engine. Each area's
 * routes spread or call these and give only what is theirs (path, words, schemas, refusals).
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { ErrorCode, Page } from '@hearth/core';
import { Inventory, InventoryPath, type PageRequest, PageOf } from '@hearth/core/shapes';
import type { EngineAnswer } from '@hearth/core/economy';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import type { Queryable } from '@hearth/core/db';
import type { HearthCore } from '@hearth/core/hearth';
import { BODY_LIMITS, type HandlerContext, type RouteLink, defineRoute } from '../../http/route';
import { playerPage, targetPlayerId } from '../players/target';

/** The service of core that reads a page of what an inventory holds, with the inventory. */
type ReadHeld = (
  core: HearthCore,
  db: Queryable,
  env: EnvironmentContext,
  playerId: string,
  inventory: string,
  page: PageRequest,
) => Promise<Page<unknown> & { inventory: Inventory }>;

/**
 * GET /players/:playerId/inventories/:inventory/<what>: a page of what the inventory holds, with the
 * inventory (either credential, `me` with a player token). `pageOf` names the page's things in its
 * answer's description (`A page of balances`).
 */
export function inventoryPage(
  service: 'inventory' | 'cards',
  route: { operationId: string; path: string; summary: string; description: string; item: TSchema; pageOf: string; links?: RouteLink[] },
  read: ReadHeld,
) {
  return defineRoute({
    ...playerPage(service),
    operationId: route.operationId,
    path: route.path,
    summary: route.summary,
    description: route.description,
    params: InventoryPath,
    success: { status: 200, description: `A page of ${route.pageOf}`, schema: PageOf(route.item, { inventory: Inventory }) },
    links: route.links,
    refusals: ['forbidden', 'not-found', 'no-current-realm'],
    handler: async (ctx) => ({ body: await read(ctx.core, ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.inventory, ctx.query) }),
  });
}

/**
 * What every move of the money engine declares alike (POST, the game services' body limit): spread it
 * into defineRoute with the area, who may call and whether the Idempotency-Key is required. The
 * move's one statement claims and answers the key's record (`idempotencyRecord: 'handler'`): one
 * round trip.
 */
export function engineMove<S extends 'inventory' | 'cards' | 'progression', C extends 'server' | 'either', I extends 'required' | 'optional'>(
  service: S,
  credential: C,
  idempotency: I,
) {
  return { method: 'POST' as const, tag: service, credential, service, idempotency, idempotencyRecord: 'handler' as const };
}

/** A move of the money engine as a handler's result: the first answer, or its replay (Idempotent-Replayed). */
export const engineAnswer = <T>({ answer, replayed }: EngineAnswer<T>) => ({ body: answer, replayed });

/** What the handler of a move on the player its path names sees: its path and body, the credential, the key's record. */
type EngineMoveContext<P extends TSchema, B extends TSchema | undefined, C extends 'server' | 'either', I extends 'required' | 'optional'> = HandlerContext<
  Static<P> & { playerId: string },
  unknown,
  B extends TSchema ? Static<B> : unknown,
  C,
  undefined,
  I,
  'handler'
>;

/**
 * engineMove for a move on the player its path names, with its path and body schemas and its
 * handler: `move` gets that player (targetPlayerId) and its answer or replay is the route's
 * (engineAnswer). Spread it into defineRoute and give the words, the answer and the refusals.
 */
export function playerEngineMove<
  S extends 'inventory' | 'cards' | 'progression',
  C extends 'server' | 'either',
  I extends 'required' | 'optional',
  P extends TSchema,
  B extends TSchema | undefined = undefined,
  T = unknown,
>(
  service: S,
  credential: C,
  idempotency: I,
  schemas: { params: P; body?: B },
  move: (ctx: EngineMoveContext<P, B, C, I>, playerId: string) => Promise<EngineAnswer<T>>,
) {
  return {
    ...engineMove(service, credential, idempotency),
    ...schemas,
    handler: async (ctx: EngineMoveContext<P, B, C, I>) => engineAnswer(await move(ctx, targetPlayerId(ctx))),
  };
}

/**
 * The refusals of a purchase of held goods with currencies (items, cards: one statement of the money
 * engine), from the player token's `forbidden` extras to the inventory the goods go to.
 */
export const PURCHASE_REFUSALS: ErrorCode[] = [
  'forbidden',
  'not-found',
  'invalid-request',
  'not-purchasable',
  'disabled',
  'insufficient-balance',
  'allowance-exceeded',
  'balance-cap',
  'owned-limit',
  'no-current-realm',
];

/**
 * An answer that says itself whether it is a retry's (a Purchase, a Movement: `replayed: true`) as a
 * handler's result, which says it in Idempotent-Replayed too.
 */
export const answerWithReplay = <T extends { replayed: boolean }>(answer: T) => ({ body: answer, replayed: answer.replayed });
