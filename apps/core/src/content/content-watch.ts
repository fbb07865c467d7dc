import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import type { InvalidationBus } from '../invalidation';
import type { CursorCodec } from '../pagination';
import { SingleFlight, TtlCache } from '../cache';
import { type Clock, systemClock } from '../clock';
import { processStopping } from '../process/serving';

/** The PostgreSQL channel every content write notifies, in its own transaction (see bumpContentVersion). */
export const CONTENT_CHANGED_CHANNEL = 'hearth_content_changed';
/**
 * The channel a player's store account or entitlements notify, with the player's id (triggers of
 * migration 20261126224000_commerce_player_notify): whoever writes them, the catalog's per-player
 * copies hear it.
 */
export const COMMERCE_PLAYER_CHANNEL = 'hearth_commerce_player_changed';

const START_WAIT_MS = 5_000;
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 15_000;

/** What the watch needs of a pg connection (the driver's Client). */
interface ListeningConnection {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error' | 'end', listener: (err?: Error) => void): unknown;
  removeAllListeners(event?: string): unknown;
  end(): Promise<void>;
}

/**
 * Content changes heard from PostgreSQL itself. A write that bumps a content version also NOTIFYs in
 * its transaction, and PostgreSQL delivers that at commit to every process LISTENing, whoever wrote
 * (`hearth apply` in another process included) and with or without Redis. Each process keeps one
 * connection listening and hands each notification to its caches as a `content` invalidation.
 *
 * The in-memory copies behind conditional reads may be answered from only while the watch is live:
 * while its connection is down a change could go unheard, so those reads go to the database until
 * it is back, and every copy made before the drop is disowned (see WatchedCache).
 */
export class ContentWatch {
  private connection?: ListeningConnection;
  private stopped = true;
  private retry?: NodeJS.Timeout;
  private retryMs = RETRY_FIRST_MS;
  private currentEpoch = 0;
  private isLive = false;

  /** `clock` ages the copies of the caches it watches for (WatchedCache). */
  constructor(
    private readonly db: Db,
    private readonly bus: InvalidationBus,
    private readonly logger: Logger,
    readonly clock: Clock = systemClock,
  ) {}

  /** Whether every committed content change reaches this process now. */
  get live(): boolean {
    return this.isLive;
  }

  /** Moves whenever the watch goes down: a copy made in an older epoch may have missed a change. */
  get epoch(): number {
    return this.currentEpoch;
  }

  /**
   * Listens. Waits for that at most START_WAIT_MS: a database that cannot be reached now (or hangs)
   * must not hold the process's start; the watch keeps trying in the background, and conditional
   * reads go to the database until it is live.
   */
  async start(): Promise<void> {
    this.stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, START_WAIT_MS);
      timer.unref();
    });
    await Promise.race([this.connect(), waited]);
    clearTimeout(timer);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.lose();
  }

  private async connect(): Promise<void> {
    let connection: ListeningConnection | undefined;
    try {
      // A connection of its own, outside the pool: LISTEN belongs to one session for its whole life.
      connection = await (this.db.client as { acquireRawConnection(): Promise<ListeningConnection> }).acquireRawConnection();
      connection.on('notification', (message) => {
        if (message.channel === CONTENT_CHANGED_CHANNEL) {
          const environmentId = Number(message.payload);
          if (Number.isInteger(environmentId)) this.bus.receive({ kind: 'content', environmentId });
        } else if (message.channel === COMMERCE_PLAYER_CHANNEL && message.payload) {
          this.bus.receive({ kind: 'commerce-player', playerId: message.payload });
        }
      });
      connection.on('error', () => this.connectionLost());
      connection.on('end', () => this.connectionLost());
      await connection.query(`LISTEN ${CONTENT_CHANGED_CHANNEL}; LISTEN ${COMMERCE_PLAYER_CHANNEL}`);
      if (this.stopped) {
        await connection.end().catch(() => undefined);
        return;
      }
      this.connection = connection;
      this.isLive = true;
      this.retryMs = RETRY_FIRST_MS;
    } catch (err) {
      connection?.removeAllListeners();
      await connection?.end().catch(() => undefined);
      this.logger.warn({ err: (err as Error).message }, 'cannot listen for content changes; conditional reads ask the database until it works');
      this.scheduleRetry();
    }
  }

  private connectionLost(): void {
    if (!this.connection) return;
    this.lose();
    if (this.stopped) return;
    const level = processStopping.begun ? 'debug' : 'warn';
    this.logger[level]('lost the connection that listens for content changes; conditional reads ask the database until it is back');
    this.scheduleRetry();
  }

  private lose(): void {
    const connection = this.connection;
    this.connection = undefined;
    this.isLive = false;
    this.currentEpoch++;
    if (connection) {
      connection.removeAllListeners();
      connection.on('error', () => undefined);
      connection.end().catch(() => undefined);
    }
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect();
    }, this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }
}

/**
 * A process-wide copy of something per key (content per environment, a player's store standing),
 * kept only while the ContentWatch can tell it of every change: a copy is answered from while the
 * watch is live and in the epoch the copy was made in; a load that overlapped an invalidation of its
 * key is used once but not kept.
 */
export class WatchedCache<V, K = number> {
  private readonly copies: TtlCache<K, { value: V; epoch: number }>;
  private readonly flight = new SingleFlight<K, V>();
  /** The loads under way, by key (one each): a drop meanwhile marks its load stale. Never more entries than loads in flight. */
  private readonly loading = new Map<K, { stale: boolean }>();

  /**
   * `ttlMs` bounds a copy's life even while the watch is live (a belt to the watch's braces);
   * `maxEntries` bounds how many are kept.
   */
  constructor(
    private readonly watch: ContentWatch,
    ttlMs: number,
    maxEntries?: number,
  ) {
    this.copies = new TtlCache(ttlMs, maxEntries, watch.clock);
  }

  /** The key's copy, or `load`'s answer (one load at a time per key). */
  async get(key: K, load: () => Promise<V>): Promise<V> {
    const hit = this.copies.get(key);
    if (hit && this.watch.live && hit.epoch === this.watch.epoch) return hit.value;
    return this.flight.run(key, async () => {
      const epoch = this.watch.epoch;
      const wasLive = this.watch.live;
      const loading = { stale: false };
      this.loading.set(key, loading);
      try {
        const value = await load();
        // Kept only when no change could have been missed while it loaded.
        if (wasLive && this.watch.live && this.watch.epoch === epoch && !loading.stale) this.copies.set(key, { value, epoch });
        return value;
      } finally {
        if (this.loading.get(key) === loading) this.loading.delete(key);
      }
    });
  }

  /** Forgets the key's copy; a load under way is not kept, and the next caller loads afresh rather than wait for it. */
  drop(key: K): void {
    const loading = this.loading.get(key);
    if (loading) loading.stale = true;
    this.flight.forget(key);
    this.copies.delete(key);
  }

  clear(): void {
    for (const [key, loading] of this.loading) {
      loading.stale = true;
      this.flight.forget(key);
    }
    this.copies.clear();
  }
}

/**
 * What every service that answers content from memory is built on: `pool` loads its process-wide
 * caches (committed data, shared by every request of the process; the reads themselves take their
 * database from their caller), `cursors` signs its pages, `bus` drops what another process changed,
 * and `watch` says while memory may be trusted.
 */
export interface ContentSources {
  pool: Db;
  cursors: CursorCodec;
  bus: InvalidationBus;
  watch: ContentWatch;
}

/**
 * A WatchedCache of one copy per environment of what it reads of the environment's content: an
 * environment's copy is dropped when its content changes, every copy when environments change.
 */
export function environmentContentCache<V>(watch: ContentWatch, bus: InvalidationBus, ttlMs: number): WatchedCache<V> {
  const cache = new WatchedCache<V>(watch, ttlMs);
  bus.on((event) => {
    if (event.kind === 'content') cache.drop(event.environmentId);
    if (event.kind === 'environments') cache.clear();
  });
  return cache;
}
