/**
 * Commerce (spec §4 Commerce, docs/commerce.md): the catalog priced for the player, proving a store
 * account (identify), orders through the store, their settlement (the client's authorization hint,
 * reconciliation) and the entitlements completed orders give.
 *
 * The store is reached only through the adapter (store.ts) with the project's publisher key, read at
 * each use (publisher-key.ts). What the store says decides: who the player is (the ticket's owner, never
 * an id a client sends), whether an order is paid (QueryTxn's status, never the client's hint).
 *
 * Exactly once (docs/commerce.md "Exactly once"): FinalizeTxn is called by the one caller whose claim
 * (`finalize_claimed_at`, a conditional UPDATE) moved the order; a claim older than the store call's
 * deadline may be taken again (its caller died). The grant is one transaction that moves the order to
 * `completed` under its row lock and inserts the entitlement (UNIQUE order_id): whoever comes second
 * finds it completed and grants nothing.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db, Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { Refusal, RouteLimitReached, refuse } from '../errors';
import type { Logger } from '../logger';
import { randomId } from '../ids';
import type { RateOutcome } from '../coord/coordination';
import { type AttemptLimit, countAttempt } from '../players/attempt-limit';
import type { CursorCodec, Page } from '../pagination';
import { DEFAULT_PAGE_SIZE, keysetPage } from '../pagination';
import { fingerprintOf, type IdempotencyScope } from '../idempotency';
import type { EconomyService } from '../economy/service';
import type { ItemService } from '../items/service';
import type { EnvironmentContext } from '../tenancy/environments';
import type { StoreSpecT } from '../contract/store';
import type { ProductDefinition } from '../contract/product';
import type {
  Catalog,
  CatalogProduct,
  Entitlement,
  Grant,
  GrantChangePage,
  IdentifyRequest,
  Order,
  OrderAuthorization,
  OrderRequest,
  OrderSettlement,
  OrderStatus,
  Reconciliation,
} from '../shapes/commerce';
import type { PageRequest } from '../shapes/common';
import { PublisherKeyMissing, type PublisherKeys } from './publisher-key';
import { STORE_CALL, STORE_ERROR, StoreClient, StoreRefusal, StoreUnavailable, type TxnReport } from './store';
import { type CatalogEntry, PRODUCTS_CONTENT, loadCatalogEntries, loadProduct } from './products';
import { DefinitionSnapshots } from '../content/definition-snapshots';
import { type ContentSources, WatchedCache } from '../content/content-watch';
import { type Announcer, type InvalidationBus, announceAfterCommit } from '../invalidation';

/** The one definition of the identify limit (spec §8): the route's documentation and the count both read it. */
export const IDENTIFY_LIMIT = { name: 'store-identify', limit: 10, windowSeconds: 600 } as const;

/** The currency the catalog is priced in before the player has proved a store account (docs/commerce.md). */
export const CATALOG_DEFAULT_CURRENCY = 'USD';

/** The advisory lock (class) that orders an environment's grant changes: taken by each completion (and revocation) until it commits. */
export const GRANT_FEED_LOCK = 0x636f6d6d; // 'comm'

/** The store's purchase status that forbids buying. */
const LOCKED = 'Locked from purchasing';

/** A finalize claim older than this was left by a caller that died: another may take it. */
const FINALIZE_CLAIM_SECONDS = Math.ceil((STORE_CALL.timeoutMs * 3) / 1000);

export type IdentifyStanding = RateOutcome['nearest'];

/** The eleventh identify of a window: 429 with Retry-After, carrying the standing for the headers. */
export class IdentifyLimitReached extends RouteLimitReached {
  constructor(standing: IdentifyStanding) {
    super(standing, `At most ${standing.limit} store identifications per ${IDENTIFY_LIMIT.windowSeconds / 60} minutes`);
  }
}

export interface OrderRow {
  id: string;
  environment_id: string;
  player_id: string;
  provider: 'steam';
  store_order_id: string;
  store_trans_id: string | null;
  store_id: string;
  sku: string;
  currency: string;
  amount: string;
  language: string;
  status: OrderStatus;
  idempotency_fingerprint: string | null;
  created_at: Date;
  updated_at: Date;
}

export const OPEN: OrderStatus[] = ['pending', 'awaiting-player'];

/** What the background reconciliation (report.ts) tells settle(): the store's status it already read, and when an untouched overlay is abandoned. */
export interface SettleOptions {
  /** The order's status from the store's report: not asked again with QueryTxn. */
  reported?: TxnReport;
  /** An order still `Init` at the store that was made before this is failed (the player never answered the overlay). */
  abandonedBefore?: Date;
}

function orderOf(row: OrderRow): Order {
  return {
    id: row.id,
    sku: row.sku,
    provider: row.provider,
    storeOrderId: row.store_order_id,
    status: row.status,
    currency: row.currency,
    amount: Number(row.amount),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

function grantOf(row: Record<string, any>): Grant {
  const { id, key, sku, orderId, status, grantedAt, revokedAt } = entitlementOf(row);
  return {
    id,
    playerId: row.player_id,
    key,
    sku,
    orderId,
    status,
    grantedAt,
    revokedAt,
    acknowledgedAt: row.acknowledged_at ? new Date(row.acknowledged_at).toISOString() : null,
  };
}

function entitlementOf(row: Record<string, any>): Entitlement {
  return {
    id: row.id,
    key: row.key,
    sku: row.sku,
    orderId: row.order_id,
    status: row.status,
    grantedAt: new Date(row.granted_at).toISOString(),
    revokedAt: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
  };
}

/** A uint64 order id no other order holds (the UNIQUE column decides): above 2^53, so a JS number could not carry it. */
function newStoreOrderId(): string {
  const n = (randomBytes(8).readBigUInt64BE() % (2n ** 64n - 2n ** 53n - 1n)) + 2n ** 53n + 1n;
  return n.toString();
}

/**
 * A refusal of an order's grant (the economy's: an item type no longer defined, a balance cap) is about
 * the product's definition, not about the request that settled the order: its words stay, but it names
 * no field of that request.
 */
function refusalOfGrant(err: unknown): unknown {
  if (!(err instanceof Refusal) || err.details?.field === undefined) return err;
  const { field: _field, ...details } = err.details;
  return new Refusal(err.code, err.message, Object.keys(details).length > 0 ? details : undefined, err.headers);
}

/** A store failure as the API's refusal: the store's own error is `provider-refused` with its code; not reaching it is `unavailable`. */
function storeRefusal(err: unknown): unknown {
  if (err instanceof StoreRefusal) {
    return new Refusal('provider-refused', `The store refused: ${err.errorDescription || `error ${err.errorCode}`}.`, { storeErrorCode: err.errorCode });
  }
  if (err instanceof PublisherKeyMissing)
    return refuse.unavailable('No store is set up for this game on this deployment: its publisher key is not configured.');
  if (err instanceof StoreUnavailable) return refuse.unavailable('The store cannot be reached now; retry later.');
  return err;
}

/** What the catalog needs of a player: the wallet currency (null before identify) and the entitlements held. */
interface CatalogStanding {
  currency: string | null;
  active: Set<string>;
}

/** How long a player's standing is kept at most while the content watch is live, and how many players'. */
const STANDING_TTL_MS = 60_000;
const STANDINGS_KEPT = 100_000;

export class CommerceService {
  /** The products on sale per environment, from memory per `products` content version (the catalog's hot path). */
  private readonly onSale: DefinitionSnapshots<CatalogEntry>;
  /**
   * Each player's standing for the catalog, from memory: dropped at once by this process's own writes
   * (announced after commit) and by anyone's through PostgreSQL's notice (a trigger on the two
   * tables), and answered from only while that notice can be heard (WatchedCache).
   */
  private readonly standings: WatchedCache<CatalogStanding, string>;
  private readonly bus: Announcer;

  /** `content.pool` serves the catalog's snapshots only (committed data, shared by every request of the process). */
  constructor(
    private readonly cursors: CursorCodec,
    private readonly keys: PublisherKeys,
    private readonly economy: EconomyService,
    private readonly items: ItemService,
    content: ContentSources,
    private readonly logger: Logger,
  ) {
    this.onSale = new DefinitionSnapshots(content, PRODUCTS_CONTENT, loadCatalogEntries);
    this.standings = new WatchedCache(content.watch, STANDING_TTL_MS, STANDINGS_KEPT);
    this.bus = content.bus;
    content.bus.on((event) => {
      if (event.kind === 'commerce-player' || event.kind === 'player') this.standings.drop(event.playerId);
      if (event.kind === 'environments') this.standings.clear();
    });
  }

  /** The player's standing as the catalog shows it: from memory while nothing changed. */
  private standingOf(db: Queryable, playerId: string): Promise<CatalogStanding> {
    return this.standings.get(playerId, async () => {
      const { rows } = await db.raw(
        `SELECT (SELECT currency FROM commerce_store_accounts WHERE player_id = ?) AS currency,
                ARRAY(SELECT key FROM commerce_entitlements WHERE player_id = ? AND status = 'active') AS active`,
        [playerId, playerId],
      );
      return { currency: rows[0].currency as string | null, active: new Set<string>(rows[0].active) };
    });
  }

  /** After a write to the player's store account or entitlements commits: this process's next catalog read sees it (others hear PostgreSQL's notice). */
  private standingChanged(db: Queryable, playerId: string): Promise<void> {
    return announceAfterCommit(db, this.bus, { kind: 'commerce-player', playerId });
  }

  /**
   * GET /commerce/catalog: the environment's products on sale, priced in the player's wallet currency
   * (or the default before identify). The products and the player's currency and entitlements come
   * from memory while nothing changed (no statement on the hot path).
   */
  async catalog(db: Queryable, env: EnvironmentContext, playerId: string, provider: 'steam'): Promise<Catalog> {
    this.settingsOf(env, provider);
    const [{ definitions }, standing] = await Promise.all([this.onSale.snapshot(env.id), this.standingOf(db, playerId)]);
    const identified = standing.currency !== null;
    const currency: string = standing.currency ?? CATALOG_DEFAULT_CURRENCY;
    const { active } = standing;
    const products: CatalogProduct[] = [];
    for (const product of definitions) {
      // Before identify the default currency, else the product's first price; after identify only the wallet's currency can be paid.
      const price = product.prices.find((p) => p.currency === currency) ?? (identified ? undefined : product.prices[0]);
      if (!price) continue;
      products.push({
        sku: product.sku,
        name: product.name,
        description: product.description,
        currency: price.currency,
        amount: price.amount,
        repeatable: product.repeatable,
        active: active.has(product.entitlement),
      });
    }
    return { products };
  }

  /**
   * POST /commerce/store/identify: counts the attempt (refused past the limit before any store call),
   * asks the store who holds the ticket and that user's wallet, and keeps them as the player's account.
   */
  async identify(db: Queryable, env: EnvironmentContext, playerId: string, input: IdentifyRequest): Promise<{ storeId: string; standing: IdentifyStanding }> {
    const settings = this.settingsOf(env, 'steam');
    if (input.identity !== settings.identity) throw refuse.invalid('identity', "identity is not this game's identity string for the store.");
    const standing = await claimIdentifyAttempt(db, env, playerId);
    const store = await this.storeOf(db, env, settings);
    let owner;
    try {
      owner = await store.authenticateUserTicket(input.ticket, settings.identity);
    } catch (err) {
      if (err instanceof StoreRefusal) throw new Refusal('invalid-ticket', 'The store refused the ticket.');
      throw storeRefusal(err);
    }
    const user = await store.getUserInfo(owner.steamId).catch((err: unknown) => Promise.reject(storeRefusal(err)));
    await db.raw(
      `INSERT INTO commerce_store_accounts (player_id, environment_id, provider, store_id, country, currency, purchase_status)
       SELECT id, environment_id, 'steam', ?, ?, ?, ? FROM players WHERE id = ? AND environment_id = ?
       ON CONFLICT (player_id) DO UPDATE SET store_id = EXCLUDED.store_id, country = EXCLUDED.country, currency = EXCLUDED.currency,
         purchase_status = EXCLUDED.purchase_status, identified_at = now()`,
      [owner.steamId, user.country, user.currency, user.status, playerId, env.id],
    );
    await this.standingChanged(db, playerId);
    return { storeId: owner.steamId, standing };
  }

  /**
   * POST /commerce/orders: the order row first (committed, so reconciliation can always find what the
   * store may have heard of), then InitTxn. With an Idempotency-Key a retry answers the order the
   * first made, as it stands; the key on another request is `idempotency-conflict`.
   */
  async createOrder(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    input: OrderRequest,
    idempotency?: IdempotencyScope,
  ): Promise<{ order: Order; replayed: boolean }> {
    const settings = this.settingsOf(env, input.provider);
    if (idempotency) {
      const replay = await this.replayedOrder(db, playerId, idempotency);
      if (replay) return { order: replay, replayed: true };
    }
    const product = await loadProduct(db, env.id, input.sku);
    if (!product || !product.enabled) throw new Refusal('not-found', `No product "${input.sku}" is on sale.`, { field: 'sku' });
    let row: OrderRow;
    try {
      const opened = await inTransaction(db, async (trx) => {
        await this.holdBuyer(trx, env, playerId);
        // Under the player's lock: a retry that waited for the first under the same key finds its order.
        const replay = idempotency ? await this.replayedOrder(trx, playerId, idempotency) : null;
        return replay ?? (await this.openOrder(trx, env, playerId, product, input, idempotency));
      });
      if (!('store_order_id' in opened)) return { order: opened, replayed: true };
      row = opened;
    } catch (err) {
      // A concurrent retry under the same key made the order first: answer it.
      if (idempotency && (err as { constraint?: string }).constraint === 'commerce_orders_idempotency') {
        const replay = await this.replayedOrder(db, playerId, idempotency);
        if (replay) return { order: replay, replayed: true };
      }
      if ((err as { constraint?: string }).constraint === 'commerce_orders_one_open') throw orderInProgress(input.sku);
      throw err;
    }
    const store = await this.storeOf(db, env, settings).catch((err: unknown) => this.failOrder(db, row, err));
    try {
      const started = await store.initTxn({
        orderId: row.store_order_id,
        steamId: row.store_id,
        language: input.language,
        currency: row.currency,
        lines: [{ itemId: product.storeItemId, qty: 1, amount: Number(row.amount), description: product.name }],
      });
      const [updated] = await db('commerce_orders')
        .where({ id: row.id, status: 'pending' })
        .update({ status: 'awaiting-player', store_trans_id: started.transId, updated_at: db.fn.now() })
        .returning('*');
      return { order: orderOf((updated as OrderRow | undefined) ?? (await db('commerce_orders').where({ id: row.id }).first())), replayed: false };
    } catch (err) {
      if (err instanceof StoreRefusal) {
        await this.failOrder(db, row, err).catch(() => undefined);
        if (err.errorCode === STORE_ERROR.notAllowedToPurchase) throw new Refusal('purchase-not-allowed', 'The store does not let this player buy.');
      }
      // Not reached or no answer: the order stays pending, and reconciliation asks the store what became of it.
      throw storeRefusal(err);
    }
  }

  /** POST /commerce/store/authorizations: the client's word that the player answered the overlay; the store's status decides. */
  async authorize(db: Queryable, env: EnvironmentContext, playerId: string, input: OrderAuthorization): Promise<OrderSettlement> {
    const settings = this.settingsOf(env, 'steam');
    const row = (await db('commerce_orders').where({ environment_id: env.id, player_id: playerId, store_order_id: input.storeOrderId }).first()) as
      OrderRow | undefined;
    if (!row) throw new Refusal('not-found', `No order of this player has storeOrderId "${input.storeOrderId}".`, { field: 'storeOrderId' });
    const settled = await this.settle(db, env, settings, row);
    return { order: orderOf(settled), entitlements: await this.entitlementsOfOrders(db, [settled.id]) };
  }

  /**
   * POST /commerce/orders/reconcile: every open order of the player asked of the store and settled.
   * One the store cannot answer stays open and is answered as it stands, beside the others settled;
   * only when the store answered none of them is its refusal the answer (docs/commerce.md).
   */
  async reconcile(db: Queryable, env: EnvironmentContext, playerId: string): Promise<Reconciliation> {
    const settings = this.settingsOf(env, 'steam');
    const open = (await db('commerce_orders')
      .where({ environment_id: env.id, player_id: playerId })
      .whereIn('status', OPEN)
      .orderBy('created_at')) as OrderRow[];
    const settled: OrderRow[] = [];
    const failures: unknown[] = [];
    for (const row of open) {
      try {
        settled.push(await this.settle(db, env, settings, row));
      } catch (err) {
        // A refusal (the store's, or the economy's for the grant) leaves this order open; anything else is a fault.
        if (!(err instanceof Refusal)) throw err;
        failures.push(err);
        settled.push(((await db('commerce_orders').where({ id: row.id }).first()) as OrderRow | undefined) ?? row);
      }
    }
    if (failures.length > 0 && failures.length === open.length) throw failures[0];
    return {
      orders: settled.map(orderOf),
      entitlements: await this.entitlementsOfOrders(
        db,
        settled.map((o) => o.id),
      ),
    };
  }

  /**
   * The background reconciliation's way in (report.ts): one order settled through the same path as
   * the routes (the finalize claim, the one completion), from the report's status when it gave one.
   */
  settleOrder(db: Queryable, env: EnvironmentContext, row: OrderRow, options: SettleOptions = {}): Promise<OrderRow> {
    return this.settle(db, env, this.settingsOf(env, 'steam'), row, options);
  }

  /** GET /players/:playerId/entitlements: every entitlement the player was given, active and revoked, oldest first. */
  async listEntitlements(db: Queryable, env: EnvironmentContext, playerId: string, q: PageRequest): Promise<Page<Entitlement>> {
    const player = await db('players').where({ id: playerId, environment_id: env.id }).first('id');
    if (!player) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
    return this.entitlementPage(db, `entitlements|${env.id}|${playerId}`, q, (query) => query.where({ player_id: playerId }), entitlementOf);
  }

  /** GET /commerce/grants: the environment's active grants no server has acknowledged, oldest first. */
  async listGrants(db: Queryable, env: EnvironmentContext, q: PageRequest): Promise<Page<Grant>> {
    return this.entitlementPage(
      db,
      `grants|${env.id}`,
      q,
      (query) => query.where({ environment_id: env.id, status: 'active' }).whereNull('acknowledged_at'),
      grantOf,
    );
  }

  /**
   * A page of entitlements in the order they were granted, narrowed by `narrow`: the position keeps
   * the time to the microsecond (a JS Date would cut it to the millisecond and repeat a row), then the id.
   */
  private entitlementPage<A>(
    db: Queryable,
    list: string,
    q: PageRequest,
    narrow: (query: Knex.QueryBuilder) => Knex.QueryBuilder,
    answer: (row: Record<string, any>) => A,
  ): Promise<Page<A>> {
    return keysetPage(
      this.cursors,
      list,
      q,
      (after: [string, string] | undefined, take) => {
        const query = narrow(db('commerce_entitlements'))
          .orderBy([{ column: 'granted_at' }, { column: 'id' }])
          .limit(take)
          .select('*', db.raw('granted_at::text AS granted_position'));
        if (after) query.whereRaw('(granted_at, id) > (?::timestamptz, ?)', after);
        return query;
      },
      (row: Record<string, any>): [string, string] => [row.granted_position, row.id],
      answer,
    );
  }

  /** POST /commerce/grants/:grantId/ack: acknowledged once; acknowledging again answers the first acknowledgement. */
  async acknowledgeGrant(db: Queryable, env: EnvironmentContext, grantId: string): Promise<Grant> {
    await db('commerce_entitlements').where({ id: grantId, environment_id: env.id }).whereNull('acknowledged_at').update({ acknowledged_at: db.fn.now() });
    const row = await db('commerce_entitlements').where({ id: grantId, environment_id: env.id }).first();
    if (!row) throw refuse.notFound('The grant', { key: grantId, field: 'grantId' });
    return grantOf(row);
  }

  /**
   * GET /commerce/grants/changes: the environment's grants given and revoked since the cursor, in
   * commit order. `next` is never null: it is where to ask from next (the same place on an empty page).
   */
  async grantChanges(db: Queryable, env: EnvironmentContext, q: PageRequest): Promise<GrantChangePage> {
    const listId = `grant-changes|${env.id}`;
    const after = q.cursor === undefined ? '0' : this.cursors.decode<string>(listId, q.cursor);
    const rows = await db('commerce_grant_changes as c')
      .join('commerce_entitlements as e', 'e.id', 'c.entitlement_id')
      .where('c.environment_id', env.id)
      .andWhere('c.seq', '>', after)
      .orderBy('c.seq')
      .limit(q.limit ?? DEFAULT_PAGE_SIZE)
      .select('e.*', 'c.seq', 'c.change', 'c.at');
    const last = rows.length > 0 ? String(rows[rows.length - 1].seq) : after;
    return {
      items: rows.map((row: Record<string, any>) => ({ change: row.change, at: new Date(row.at).toISOString(), grant: grantOf(row) })),
      next: this.cursors.encode(listId, last),
    };
  }

  /**
   * The project's store settings for `provider`. Without them the commerce service cannot serve the
   * project at all, as if it were switched off: `service-disabled`.
   */
  private settingsOf(env: EnvironmentContext, provider: 'steam'): StoreSpecT {
    const settings = env.store;
    if (!settings || settings.provider !== provider)
      throw new Refusal('service-disabled', 'This game does not sell through that store: its project sets no store settings for it.');
    return settings;
  }

  /**
   * GetReport for the environment's project, with the project's key (the background reconciliation,
   * report.ts). The store's failures are thrown as the adapter's (StoreUnavailable, StoreRefusal).
   */
  /** Whether this deployment holds the project's publisher key (sealed by the operator, mounted, or in the environment). */
  async storeConfigured(db: Queryable, env: EnvironmentContext): Promise<boolean> {
    try {
      await this.keys.read(db, env, this.settingsOf(env, 'steam').publisherKey);
      return true;
    } catch (err) {
      if (err instanceof PublisherKeyMissing) return false;
      throw err;
    }
  }

  async storeReport(db: Queryable, env: EnvironmentContext, since: Date, maxResults: number): Promise<{ count: number; orders: TxnReport[] }> {
    const store = await this.storeOf(db, env, this.settingsOf(env, 'steam'));
    return store.getReport(since, maxResults);
  }

  private async storeOf(db: Queryable, env: EnvironmentContext, settings: StoreSpecT): Promise<StoreClient> {
    try {
      return new StoreClient({
        settings,
        publisherKey: await this.keys.read(db, env, settings.publisherKey),
        onFailure: (failure) => this.storeFailed(env, failure),
      });
    } catch (err) {
      throw storeRefusal(err);
    }
  }

  /** Why a store call failed, for the operator: the answer says only `unavailable` or `provider-refused`. The store refusing a ticket is a player's doing, not a fault. */
  private storeFailed(env: EnvironmentContext, failure: StoreRefusal | StoreUnavailable): void {
    if (failure instanceof StoreUnavailable) {
      this.logger.warn({ environmentId: env.id, call: failure.call, reason: failure.reason, err: failure.message }, 'the store call failed');
    } else {
      this.logger.info({ environmentId: env.id, call: failure.call, storeErrorCode: failure.errorCode, err: failure.message }, 'the store refused the call');
    }
  }

  private async replayedOrder(db: Queryable, playerId: string, idempotency: IdempotencyScope): Promise<Order | null> {
    const row = (await db('commerce_orders').where({ player_id: playerId, idempotency_key: idempotency.key }).first()) as OrderRow | undefined;
    if (!row) return null;
    if (row.idempotency_fingerprint !== idempotency.fingerprint)
      throw new Refusal('idempotency-conflict', 'This Idempotency-Key was used for another request.');
    return orderOf(row);
  }

  /** The buyer's row lock: one order of a player is made at a time. */
  private async holdBuyer(trx: Tx, env: EnvironmentContext, playerId: string): Promise<void> {
    const held = await trx.raw('SELECT 1 FROM players WHERE id = ? AND environment_id = ? FOR NO KEY UPDATE', [playerId, env.id]);
    if (held.rows.length === 0) throw refuse.unauthorized('The player no longer exists.');
  }

  /** The order row, under the player's lock (holdBuyer): refused when the player has no store account, may not buy, holds it already or has one open. */
  private async openOrder(
    trx: Tx,
    env: EnvironmentContext,
    playerId: string,
    product: ProductDefinition,
    input: OrderRequest,
    idempotency?: IdempotencyScope,
  ): Promise<OrderRow> {
    const account = await trx('commerce_store_accounts').where({ player_id: playerId }).first();
    if (!account) throw new Refusal('no-steam-account', 'The player has not proved a store account: identify first.');
    if (account.purchase_status === LOCKED) throw new Refusal('purchase-not-allowed', 'The store does not let this player buy.');
    const price = product.prices.find((p) => p.currency === account.currency);
    if (!price) throw new Refusal('not-purchasable', `"${product.sku}" is not sold in the player's store currency (${account.currency}).`);
    // Open orders are read before entitlements: a completion does not take the player's lock, and it moves its
    // order out of the open states and makes the entitlement in one commit. Read the other way round, a
    // completion committing between the two reads would pass both (no entitlement yet, no open order any more)
    // and a one-time product would be held twice.
    const open = await trx('commerce_orders').where({ player_id: playerId, sku: product.sku }).whereIn('status', OPEN).first('id');
    if (!product.repeatable) {
      const active = await trx('commerce_entitlements').where({ player_id: playerId, key: product.entitlement, status: 'active' }).first('id');
      if (active) throw new Refusal('already-active', `The player already holds "${product.sku}".`);
    }
    if (open) throw orderInProgress(product.sku);
    const [row] = await trx('commerce_orders')
      .insert({
        id: randomId(),
        environment_id: env.id,
        player_id: playerId,
        provider: input.provider,
        store_order_id: newStoreOrderId(),
        store_id: account.store_id,
        sku: product.sku,
        currency: price.currency,
        amount: price.amount,
        language: input.language,
        status: 'pending',
        idempotency_key: idempotency?.key ?? null,
        idempotency_fingerprint: idempotency?.fingerprint ?? null,
      })
      .returning('*');
    return row as OrderRow;
  }

  private async failOrder(db: Queryable, row: OrderRow, err: unknown): Promise<never> {
    await db('commerce_orders').where({ id: row.id }).whereIn('status', OPEN).update({ status: 'failed', updated_at: db.fn.now() });
    throw storeRefusal(err);
  }

  /**
   * Asks the store about one order and moves it: `Approved` is finalized (by the one claim holder),
   * `Succeeded` completed and granted, `Failed` failed. A settled order is answered as it is.
   */
  private async settle(db: Queryable, env: EnvironmentContext, settings: StoreSpecT, row: OrderRow, options: SettleOptions = {}): Promise<OrderRow> {
    if (!OPEN.includes(row.status)) return row;
    const store = await this.storeOf(db, env, settings);
    let txn: TxnReport;
    try {
      txn = options.reported ?? (await store.queryTxn(row.store_order_id));
    } catch (err) {
      // The store has not heard of a pending order: its InitTxn is still on the way (the order stays pending,
      // answered as it stands), or, once that call's deadline is long over, never arrived (it never began).
      if (err instanceof StoreRefusal && err.errorCode === STORE_ERROR.invalidParameter && row.status === 'pending') {
        return Date.now() - new Date(row.created_at).getTime() > FINALIZE_CLAIM_SECONDS * 1000 ? this.moveOpen(db, row, 'failed') : row;
      }
      throw storeRefusal(err);
    }
    if (txn.steamId !== row.store_id) throw refuse.unavailable('The store names another account for this order.');
    switch (txn.status) {
      case 'Init':
        return options.abandonedBefore && new Date(row.created_at) < options.abandonedBefore ? this.moveOpen(db, row, 'failed') : row;
      case 'Approved':
        return this.finalize(db, env, store, row);
      case 'Succeeded':
        return this.complete(db, env, row.id);
      case 'Failed':
        return this.moveOpen(db, row, 'failed');
      case 'Refunded':
      case 'PartialRefund':
      case 'RefundedSuspectedFraud':
      case 'RefundedFriendlyFraud':
        return this.moveOpen(db, row, 'refunded');
      case 'Chargedback':
        return this.moveOpen(db, row, 'chargedback');
    }
  }

  /** FinalizeTxn by the one caller whose claim moved the order; "already committed" is asked again and `Succeeded` accepted. */
  private async finalize(db: Queryable, env: EnvironmentContext, store: StoreClient, row: OrderRow): Promise<OrderRow> {
    const claimed = await db('commerce_orders')
      .where({ id: row.id })
      .whereIn('status', OPEN)
      .andWhereRaw(`(finalize_claimed_at IS NULL OR finalize_claimed_at < now() - interval '${FINALIZE_CLAIM_SECONDS} seconds')`)
      .update({ finalize_claimed_at: db.fn.now() })
      .returning('id');
    if (claimed.length === 0) return (await db('commerce_orders').where({ id: row.id }).first()) as OrderRow; // another caller is finalizing it
    try {
      await store.finalizeTxn(row.store_order_id);
    } catch (err) {
      if (!(err instanceof StoreRefusal && err.errorCode === STORE_ERROR.alreadyCommitted)) {
        await db('commerce_orders').where({ id: row.id }).update({ finalize_claimed_at: null });
        throw storeRefusal(err);
      }
      const again = await store.queryTxn(row.store_order_id).catch((e: unknown) => Promise.reject(storeRefusal(e)));
      if (again.status !== 'Succeeded') throw refuse.unavailable(`The store says the order is ${again.status}; retry later.`);
    }
    return this.complete(db, env, row.id);
  }

  /** The grant, once per order: the order completed under its row lock and its entitlement made in one transaction. */
  private complete(db: Queryable, env: EnvironmentContext, orderId: string): Promise<OrderRow> {
    return inTransaction(db, async (trx) => {
      const row = (await trx('commerce_orders').where({ id: orderId }).forUpdate().first()) as OrderRow;
      if (!OPEN.includes(row.status)) return row;
      const product = await loadProduct(trx, env.id, row.sku);
      // The entitlement key is the product's now; a product deleted since the order was made still gives its sku.
      // Grant changes of an environment commit in the order of their seq (the feed never skips one committed late).
      await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [GRANT_FEED_LOCK, env.id]);
      const entitlementId = randomId();
      await trx('commerce_entitlements').insert({
        id: entitlementId,
        environment_id: env.id,
        player_id: row.player_id,
        key: product?.entitlement ?? row.sku,
        sku: row.sku,
        order_id: row.id,
      });
      await trx('commerce_grant_changes').insert({ environment_id: env.id, entitlement_id: entitlementId, change: 'granted' });
      // The economy's share, each move through the money engine under a key derived from the order, in this
      // transaction: it commits with the order's completion or not at all. A refusal (a balance cap, an item
      // type switched off) rolls the completion back: the order stays open and the grant is tried again at
      // the next settlement, never lost and never doubled.
      try {
        await this.grantProduct(trx, env, row, product);
      } catch (err) {
        throw refusalOfGrant(err);
      }
      const [updated] = await trx('commerce_orders')
        .where({ id: orderId })
        .update({ status: 'completed', currency_grants_recorded: true, updated_at: trx.fn.now() })
        .returning('*');
      await this.standingChanged(trx, row.player_id);
      return updated as OrderRow;
    });
  }

  /** The economy's share of an order's grant: each currency and item of its product, through the money engine. */
  private async grantProduct(trx: Tx, env: EnvironmentContext, row: OrderRow, product: ProductDefinition | null): Promise<void> {
    for (const { currencyKey, amount } of product?.currencies ?? []) {
      const key = `order:${row.id}:currency:${currencyKey}`;
      const movement = await this.economy.creditForOrder(
        trx,
        env,
        row.player_id,
        currencyKey,
        amount,
        row.id,
        this.grantRecord(env, key, [currencyKey, amount]),
      );
      // What a refund takes back (report.ts revokeOrder): the order's own record, never the ledger searched by reason.
      await trx('commerce_order_currency_grants')
        .insert({ order_id: row.id, currency_key: currencyKey, inventory_id: movement.inventoryId, amount })
        .onConflict(['order_id', 'currency_key'])
        .ignore();
    }
    for (const { itemTypeKey, quantity } of product?.items ?? []) {
      const key = `order:${row.id}:items:${itemTypeKey}`;
      const { answer } = await this.items.grant(trx, env, row.player_id, { itemTypeKey, quantity }, this.grantRecord(env, key, [itemTypeKey, quantity]));
      // What a refund takes back (report.ts revokeOrder): where the items went, and which one-by-one items they are.
      await trx('commerce_order_item_grants')
        .insert({
          order_id: row.id,
          item_type_key: itemTypeKey,
          inventory_id: answer.inventoryId,
          quantity,
          item_ids: answer.stack ? null : answer.items.map((item) => item.id),
        })
        .onConflict(['order_id', 'item_type_key'])
        .ignore();
    }
  }

  /** The idempotency record of one economy move of an order's grant (scope `commerce`: no caller's keys collide with it). */
  private grantRecord(env: EnvironmentContext, key: string, what: unknown[]): IdempotencyScope {
    return { environmentId: env.id, scope: 'commerce', key, fingerprint: fingerprintOf(['commerce-grant', key, ...what]) };
  }

  private async moveOpen(db: Queryable, row: OrderRow, status: OrderStatus): Promise<OrderRow> {
    const [updated] = await db('commerce_orders').where({ id: row.id }).whereIn('status', OPEN).update({ status, updated_at: db.fn.now() }).returning('*');
    return (updated as OrderRow | undefined) ?? ((await db('commerce_orders').where({ id: row.id }).first()) as OrderRow);
  }

  private async entitlementsOfOrders(db: Queryable, orderIds: string[]): Promise<Entitlement[]> {
    if (orderIds.length === 0) return [];
    const rows = await db('commerce_entitlements')
      .whereIn('order_id', orderIds)
      .orderBy([{ column: 'granted_at' }, { column: 'id' }]);
    return rows.map(entitlementOf);
  }
}

function orderInProgress(sku: string): Refusal {
  return new Refusal('order-in-progress', `An order for "${sku}" is already waiting for the player.`);
}

const IDENTIFY_ATTEMPTS: AttemptLimit = {
  ...IDENTIFY_LIMIT,
  attempts: { table: 'commerce_identify_attempts', at: 'at' },
  refused: (standing) => new IdentifyLimitReached(standing),
};

/**
 * Counts this identify against the player's limit (spec §8: ten per player per ten clock minutes),
 * in its own committed transaction under the player's row lock, before the store is asked: exact under
 * concurrency, and a refused identify never reaches the store.
 */
async function claimIdentifyAttempt(db: Queryable, env: EnvironmentContext, playerId: string): Promise<IdentifyStanding> {
  return inTransaction(db, async (trx) => {
    const { standing, windowStart } = await countAttempt(trx, env, playerId, IDENTIFY_ATTEMPTS);
    // Attempts of past windows count for nothing: dropped here, under the same lock, so the table stays small.
    await trx.raw('DELETE FROM commerce_identify_attempts WHERE player_id = ? AND at < to_timestamp(?)', [playerId, windowStart]);
    await trx('commerce_identify_attempts').insert({ player_id: playerId });
    return standing;
  });
}
