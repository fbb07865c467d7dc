/**
 * The background reconciliation of commerce (docs/commerce.md "Background reconciliation",
 * "Refunds and chargebacks"): run by the worker fleet (`hearth crash-worker`, and `hearth dev`), one
 * runner per project at a time across pods.
 *
 * Each tick, per project with store settings:
 * 1. GetReport (GAMESALES) from the project's durable time cursor (`commerce_report_cursors`): an
 *    order still open is settled through the SAME path as the routes (CommerceService.settleOrder:
 *    the finalize claim, the one completion); a completed order refunded or charged back is revoked
 *    (`revokeOrder`). The cursor moves after the orders read were applied, to the store's time of the
 *    last one; a revocation that failed holds it there (read again next tick), an open order that
 *    could not be settled does not (step 2 asks it again). The report is read from that time
 *    inclusive, so orders are read twice: applying one again changes nothing (the order's state
 *    decides).
 * 2. The open orders asked longest ago (bounded per tick): QueryTxn through the same path, and an
 *    order still `Init` at the store past the abandoned age is failed (no money was taken: only
 *    FinalizeTxn takes it).
 *
 * One runner at a time: a session advisory lock per project (`pg_try_advisory_lock`) on a connection
 * held for the project's run. PostgreSQL frees it when that connection ends, so a runner killed
 * mid-run frees its projects at once, with no lease length to tune; another runner skips a project
 * it finds locked.
 */
import type { Db, Queryable } from '../db/knex';
import { type Clock, type Timer, systemClock } from '../clock';
import { inTransaction } from '../db/transaction';
import { Refusal } from '../errors';
import { fingerprintOf } from '../idempotency';
import { runEngineMove } from '../economy/engine';
import { ENGINE_REASONS } from '../contract/ledger-reasons';
import type { Logger } from '../logger';
import type { OrderStatus } from '../shapes/commerce';
import { type EnvironmentContext, loadEnvironmentById } from '../tenancy/environments';
import { type CommerceService, GRANT_FEED_LOCK, OPEN, type OrderRow } from './service';
import { StoreRefusal, StoreUnavailable, type TxnReport, type TxnStatus } from './store';

/** The advisory lock (class) of a project's report run: one runner at a time across pods. */
const REPORT_LOCK = 0x72657074; // 'rept'

/** A first run starts this long before the project's oldest order (or now, without orders). */
const FIRST_POSITION_MARGIN = '1 hour';

/** The store's statuses that take a completed order's grant back, and the order's state after. */
const TAKE_BACK: Partial<Record<TxnStatus, 'refunded' | 'chargedback'>> = {
  Refunded: 'refunded',
  PartialRefund: 'refunded',
  RefundedSuspectedFraud: 'refunded',
  RefundedFriendlyFraud: 'refunded',
  Chargedback: 'chargedback',
};

export interface StoreReportSettings {
  /** How often a runner ticks (COMMERCE_REPORT_INTERVAL_SECONDS, default 60). */
  intervalSeconds: number;
  /** Orders read per GetReport, one call per project per tick (COMMERCE_REPORT_MAX_RESULTS, default 500). */
  maxResults: number;
  /** Open orders asked of the store per project per tick (COMMERCE_REPORT_OPEN_ORDERS, default 50). */
  openOrdersPerTick: number;
  /** An open order is asked again at most this often (COMMERCE_REPORT_RECHECK_SECONDS, default 120). */
  recheckSeconds: number;
  /** An order the player left in the overlay (`Init` at the store) this long is failed (COMMERCE_ABANDONED_ORDER_SECONDS, default 3600). */
  abandonedAfterSeconds: number;
}

export const DEFAULT_STORE_REPORT_SETTINGS: StoreReportSettings = {
  intervalSeconds: 60,
  maxResults: 500,
  openOrdersPerTick: 50,
  recheckSeconds: 120,
  abandonedAfterSeconds: 3600,
};

/** What the job did, for the process's metrics (the worker's prom-client registry implements it). */
export interface StoreReportObserver {
  /**
   * One project's run: `succeeded`, `failed` (the store or an order could not be read or applied),
   * `skipped` (another runner holds it), `unconfigured` (this deployment holds no publisher key for it).
   */
  projectRun(outcome: ProjectRunOutcome): void;
  /** An order the job moved: `settled` from the report or a QueryTxn, `expired` (abandoned or never heard of), `revoked` (refund, chargeback). */
  order(action: 'settled' | 'expired' | 'revoked', status: OrderStatus): void;
  storeError(call: string, reason: string): void;
  /** The job started ticking: until a tick succeeds, it is as stale as its age. */
  started(at: Date): void;
  /** A tick in which no project's run failed. */
  tickSucceeded(at: Date): void;
}

export type ProjectRunOutcome = 'succeeded' | 'failed' | 'skipped' | 'unconfigured';

export interface TickSummary {
  projects: { projectId: number; outcome: ProjectRunOutcome }[];
}

interface ProjectRun {
  projectId: number;
  /** One of its environments: the store settings and the publisher key are the project's. */
  first: EnvironmentContext;
  /** Its live environments, by id: an order is applied only in one of them. */
  environments: Map<number, EnvironmentContext>;
}

function environmentOf(project: ProjectRun, row: OrderRow): EnvironmentContext {
  const env = project.environments.get(Number(row.environment_id));
  if (!env) throw new Error(`order ${row.id} is not of project ${project.projectId}`);
  return env;
}

/** A failure kept to be thrown after the rest of the run: always an Error. */
function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** What a revocation took back: the take-back move's answer (per currency and item type: given, taken, shortfall). */
export interface TakeBack {
  orderId: string;
  currencies: {
    currencyKey: string;
    inventoryId: string;
    given: number;
    taken: number;
    shortfall: number;
    balanceAfter: number;
    transactionId: string | null;
  }[];
  items: { itemTypeKey: string; inventoryId: string; given: number; taken: number; shortfall: number }[];
}

export class StoreReportJob {
  private timer?: Timer;
  private running?: Promise<unknown>;
  private stopped = false;
  /** Projects already said to have no publisher key here (said again once one appears and goes). */
  private readonly unconfigured = new Set<number>();

  constructor(
    private readonly db: Db,
    private readonly commerce: CommerceService,
    private readonly logger: Logger,
    private readonly settings: StoreReportSettings,
    private readonly observer?: StoreReportObserver,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Ticks every `intervalSeconds` (the first at once) until stop(): the next is set when a tick ends. */
  start(): void {
    this.observer?.started(new Date());
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'commerce report tick failed'))
        .finally(() => {
          if (!this.stopped) this.timer = this.clock.after(this.settings.intervalSeconds * 1000, loop);
        });
    };
    loop();
  }

  /** Stops ticking and waits for the tick in hand. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running;
  }

  /** One pass over every project that sells through a store. */
  async tick(): Promise<TickSummary> {
    const summary: TickSummary = { projects: [] };
    for (const project of await projectsWithStore(this.db)) {
      // Store settings without a key here (`hearth dev` without HEARTH_DEV_STORE_KEY, a Secret not yet
      // carried): nothing to ask the store with. Said once per project, not warned each tick; the
      // project's cursor lag still grows, so the lag alert tells an SRE whose key went missing.
      if (!(await this.commerce.storeConfigured(this.db, project.first))) {
        if (!this.unconfigured.has(project.projectId)) {
          this.unconfigured.add(project.projectId);
          this.logger.info({ projectId: project.projectId }, 'commerce report job passes over a project: no publisher key for it on this deployment');
        }
        this.observer?.projectRun('unconfigured');
        summary.projects.push({ projectId: project.projectId, outcome: 'unconfigured' });
        continue;
      }
      this.unconfigured.delete(project.projectId);
      const release = await tryProjectLock(this.db, project.projectId);
      let outcome: ProjectRunOutcome = 'skipped';
      if (release) {
        try {
          await this.runProject(project);
          outcome = 'succeeded';
        } catch (err) {
          outcome = 'failed';
          this.logger.warn({ projectId: project.projectId, err: (err as Error).message }, 'commerce report run failed; tried again next tick');
        } finally {
          await release();
        }
      }
      this.observer?.projectRun(outcome);
      summary.projects.push({ projectId: project.projectId, outcome });
    }
    if (!summary.projects.some((p) => p.outcome === 'failed')) this.observer?.tickSucceeded(new Date());
    return summary;
  }

  private async runProject(project: ProjectRun): Promise<void> {
    const envIds = [...project.environments.keys()];
    const read = await this.readReport(project, envIds).then(() => undefined, asError);
    const swept = await this.sweepOpenOrders(project, envIds).then(() => undefined, asError);
    const failure = read ?? swept;
    if (failure) throw failure;
  }

  /** The report from the cursor, each order applied, the cursor moved past what was applied. */
  private async readReport(project: ProjectRun, envIds: number[]): Promise<void> {
    const cursor = await cursorOf(this.db, project.projectId, envIds);
    const startedAt: Date = (await this.db.raw('SELECT now() AS now')).rows[0].now;
    let report;
    try {
      report = await this.commerce.storeReport(this.db, project.first, cursor.position, this.settings.maxResults);
    } catch (err) {
      this.countStoreError(err);
      throw err;
    }
    let position = cursor.position;
    let held: Error | undefined;
    let unsettled: Error | undefined;
    for (const txn of report.orders) {
      const at = storeTime(txn.time);
      try {
        const failed = await this.applyReported(project, txn, envIds);
        if (failed) {
          this.countStoreError(failed);
          unsettled ??= failed;
        }
      } catch (err) {
        this.countStoreError(err);
        held = asError(err);
        if (at && at > position) position = at; // the failed order is read again: the report is inclusive
        break;
      }
      if (at && at > position) position = at;
    }
    const readToEnd = held === undefined && report.orders.length < this.settings.maxResults;
    await this.db('commerce_report_cursors')
      .where({ project_id: project.projectId })
      .update({ position, read_through: readToEnd ? startedAt : this.db.raw('read_through'), updated_at: this.db.fn.now() });
    const failure = held ?? unsettled;
    if (failure !== undefined) throw failure;
  }

  /**
   * One order of the report applied. An open order that cannot be settled now is answered, not
   * thrown: the open-order sweep asks it again, so it need not hold the cursor (one player's order
   * stuck on a currency's cap must not stop the project's refunds). A revocation that fails is thrown:
   * nothing but the report would find it again, so it holds the cursor.
   */
  private async applyReported(project: ProjectRun, txn: TxnReport, envIds: number[]): Promise<Error | undefined> {
    const row = (await this.db('commerce_orders').where({ store_order_id: txn.orderId }).whereIn('environment_id', envIds).first()) as OrderRow | undefined;
    if (!row) return undefined; // an order of another project selling under the same app, or made outside Hearth
    const env = environmentOf(project, row);
    let current = row;
    if (OPEN.includes(row.status)) {
      try {
        current = await this.commerce.settleOrder(this.db, env, row, { reported: txn });
        if (current.status !== row.status) this.observer?.order('settled', current.status);
      } catch (err) {
        return asError(err);
      }
    }
    // Still a take-back when the order was open as read but a racing settlement completed it first: the
    // settle path then answers it `completed`, and the cursor may move past this refund for good.
    const to = TAKE_BACK[txn.status];
    if (current.status !== 'completed' || !to) return undefined;
    // A partial refund takes the grant back when its line (Hearth sends one per order) was refunded.
    if (txn.status === 'PartialRefund' && !txn.items.some((item) => item.itemStatus === 'Refunded')) return undefined;
    if (await revokeOrder(this.db, env, row.id, to)) this.observer?.order('revoked', to);
    return undefined;
  }

  /** The open orders asked longest ago, each through the routes' settle path; abandoned overlays failed. */
  private async sweepOpenOrders(project: ProjectRun, envIds: number[]): Promise<void> {
    const due = (await this.db('commerce_orders')
      .whereIn('environment_id', envIds)
      .whereIn('status', OPEN)
      .andWhereRaw('coalesce(store_checked_at, created_at) < now() - make_interval(secs => ?)', [this.settings.recheckSeconds])
      .orderByRaw('coalesce(store_checked_at, created_at)')
      .limit(this.settings.openOrdersPerTick)) as OrderRow[];
    const abandonedBefore = new Date(Date.now() - this.settings.abandonedAfterSeconds * 1000);
    let failure: Error | undefined;
    for (const row of due) {
      await this.db('commerce_orders').where({ id: row.id }).update({ store_checked_at: this.db.fn.now() });
      try {
        const settled = await this.commerce.settleOrder(this.db, environmentOf(project, row), row, { abandonedBefore });
        if (settled.status === row.status) continue;
        // Failed past the abandoned age, or while pending (the store never heard of it): expired rather than declined.
        const expired = settled.status === 'failed' && (row.status === 'pending' || new Date(row.created_at) < abandonedBefore);
        this.observer?.order(expired ? 'expired' : 'settled', settled.status);
      } catch (err) {
        // The order stays open and is asked again after recheckSeconds; the others are still asked.
        this.countStoreError(err);
        failure ??= asError(err);
      }
    }
    if (failure) throw failure;
  }

  private countStoreError(err: unknown): void {
    if (err instanceof StoreUnavailable) this.observer?.storeError(err.call, err.reason);
    else if (err instanceof StoreRefusal) this.observer?.storeError(err.call, `refused-${err.errorCode}`);
    // The store's failure as a route would answer it (a settle, or a publisher key that cannot be read).
    else if (err instanceof Refusal && (err.code === 'unavailable' || err.code === 'provider-refused')) this.observer?.storeError('settle', err.code);
  }
}

/**
 * A completed order's grant taken back (a refund or a chargeback), in one transaction: the order
 * locked and moved from `completed` (so seen twice, the second finds it moved and changes nothing),
 * its entitlement revoked with a `revoked` change in the grants feed (under the environment's feed
 * lock, as a grant), the currencies and items it gave taken back through the money engine. Answers
 * what was taken back, or null when the order was not `completed`.
 */
export function revokeOrder(db: Queryable, env: EnvironmentContext, orderId: string, to: 'refunded' | 'chargedback'): Promise<TakeBack | null> {
  return inTransaction(db, async (trx) => {
    const row = (await trx('commerce_orders').where({ id: orderId, environment_id: env.id }).forUpdate().first()) as OrderRow | undefined;
    if (!row || row.status !== 'completed') return null;
    await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [GRANT_FEED_LOCK, env.id]);
    const [entitlement] = await trx('commerce_entitlements')
      .where({ order_id: row.id, status: 'active' })
      .update({ status: 'revoked', revoked_at: trx.fn.now() })
      .returning('id');
    if (entitlement) await trx('commerce_grant_changes').insert({ environment_id: env.id, entitlement_id: entitlement.id, change: 'revoked' });
    const reason = to === 'refunded' ? ENGINE_REASONS.commerceRefund : ENGINE_REASONS.commerceChargeback;
    const key = `order:${row.id}:take-back`;
    const { answer } = await runEngineMove<TakeBack>(
      trx,
      env,
      row.player_id,
      'commerce-take-back',
      { orderId: row.id, reason },
      { environmentId: env.id, scope: 'commerce', key, fingerprint: fingerprintOf(['commerce-take-back', key, reason]) },
    );
    await trx('commerce_orders').where({ id: row.id }).update({ status: to, updated_at: trx.fn.now() });
    return answer;
  });
}

/** Seconds since each project's report was last read to its end (or, before that, since its cursor), by project name. */
export async function reportCursorLags(db: Queryable): Promise<{ project: string; lagSeconds: number }[]> {
  const result = await db.raw(
    `SELECT p.name AS project, extract(epoch FROM now() - coalesce(c.read_through, c.position))::float8 AS lag
       FROM commerce_report_cursors c JOIN projects p ON p.id = c.project_id
      WHERE p.spec->'store' IS NOT NULL`,
  );
  return (result.rows as { project: string; lag: number }[]).map((r) => ({ project: r.project, lagSeconds: Math.max(0, r.lag) }));
}

/** The live environments of every project with store settings, grouped by project. */
async function projectsWithStore(db: Queryable): Promise<ProjectRun[]> {
  const ids = (await db('environments as e')
    .join('projects as p', 'p.id', 'e.project_id')
    .whereNull('e.retired_at')
    .whereRaw("p.spec->'store' IS NOT NULL")
    .orderBy(['p.id', 'e.id'])
    .select('e.id')) as { id: string }[];
  const projects = new Map<number, ProjectRun>();
  for (const { id } of ids) {
    const env = await loadEnvironmentById(db, Number(id));
    if (!env?.store) continue;
    const run = projects.get(env.project.id) ?? { projectId: env.project.id, first: env, environments: new Map() };
    run.environments.set(env.id, env);
    projects.set(env.project.id, run);
  }
  return [...projects.values()];
}

/** The project's cursor, made on its first run: an hour before its oldest order, or now. */
async function cursorOf(db: Queryable, projectId: number, envIds: number[]): Promise<{ position: Date }> {
  await db.raw(
    `INSERT INTO commerce_report_cursors (project_id, position)
     SELECT ?, coalesce((SELECT min(created_at) FROM commerce_orders WHERE environment_id = ANY(?::bigint[])), now()) - interval '${FIRST_POSITION_MARGIN}'
     ON CONFLICT (project_id) DO NOTHING`,
    [projectId, envIds],
  );
  const row = await db('commerce_report_cursors').where({ project_id: projectId }).first('position');
  return { position: new Date(row.position) };
}

/** The store's RFC 3339 time of an order, or null when it gave none. */
function storeTime(time: string): Date | null {
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? null : new Date(ms);
}

interface PgConnection {
  query(sql: string, params: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}

/**
 * The project's run lock, a session advisory lock on a connection of the pool held until release:
 * null when another runner holds it. A connection that cannot unlock is closed (which unlocks).
 */
async function tryProjectLock(db: Db, projectId: number): Promise<(() => Promise<void>) | null> {
  const pool = db.client as unknown as { acquireConnection(): Promise<PgConnection>; releaseConnection(c: PgConnection): Promise<void> };
  const conn = await pool.acquireConnection();
  let held = false;
  try {
    held = (await conn.query('SELECT pg_try_advisory_lock($1, $2::int) AS held', [REPORT_LOCK, projectId])).rows[0]?.held === true;
  } finally {
    if (!held) await pool.releaseConnection(conn);
  }
  if (!held) return null;
  return async () => {
    try {
      await conn.query('SELECT pg_advisory_unlock($1, $2::int)', [REPORT_LOCK, projectId]);
    } catch {
      await conn.end().catch(() => undefined);
    }
    await pool.releaseConnection(conn);
  };
}

/** The job as a worker process builds it, over the process's commerce service and clock (HearthCore's). */
export function storeReportJob(deps: {
  db: Db;
  logger: Logger;
  settings: StoreReportSettings;
  commerce: CommerceService;
  clock?: Clock;
  observer?: StoreReportObserver;
}): StoreReportJob {
  return new StoreReportJob(deps.db, deps.commerce, deps.logger, deps.settings, deps.observer, deps.clock);
}
