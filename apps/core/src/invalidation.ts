import type { Coordination } from './coord/coordination';
import type { Queryable, Tx } from './db/knex';
import { afterCommit, isTransaction } from './db/transaction';

/**
 * Cache invalidation between processes: whoever changes a cached thing announces it here, and every
 * process (including the announcer) drops its copy. Caches also expire on their own, so a missed
 * message costs seconds of staleness, never correctness of durable data.
 */
export type Invalidation =
  | { kind: 'environments' }
  | { kind: 'server-key'; keyId: string }
  | { kind: 'licence-key'; keyId: string }
  | { kind: 'player'; playerId: string; reason: 'signed-out' | 'deleted' | 'renamed' }
  | { kind: 'content'; environmentId: number }
  /** A player's store account or entitlements changed (the catalog's per-player copy; PostgreSQL also NOTIFYs it). */
  | { kind: 'commerce-player'; playerId: string }
  /** Its GameEnvironment was deleted: realtime processes close its sockets (after `environments`, which drops the caches). */
  | { kind: 'environment-retired'; environmentId: number }
  | { kind: 'signing-keys' };

/** The pub/sub channel every process listens on for invalidations. */
export const INVALIDATION_CHANNEL = 'invalidate';

export class InvalidationBus {
  private listeners = new Set<(event: Invalidation) => void>();
  private unsubscribe?: () => Promise<void>;

  constructor(
    private readonly coordination: Coordination,
    private readonly onPublishError: (err: Error) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.coordination.subscribe(INVALIDATION_CHANNEL, (message) => {
      let event: Invalidation;
      try {
        event = JSON.parse(message) as Invalidation;
      } catch {
        return;
      }
      this.receive(event);
    });
  }

  on(listener: (event: Invalidation) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Drops this process's copy at once, then tells the others. The change it announces is already
   * committed, so a failed publish (Redis down) is reported, not thrown: the other processes' copies
   * then expire on their own within their time-to-live.
   */
  async announce(event: Invalidation): Promise<void> {
    this.receive(event);
    try {
      await this.coordination.publish(INVALIDATION_CHANNEL, JSON.stringify(event));
    } catch (err) {
      this.onPublishError(err as Error);
    }
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
  }

  /** Hands `event` to this process's listeners only (what the content watch hears from PostgreSQL). */
  receive(event: Invalidation): void {
    for (const listener of this.listeners) listener(event);
  }
}

/** What a writer needs of the bus: a domain function that changes a cached thing takes one. */
export type Announcer = Pick<InvalidationBus, 'announce'>;

/** Events already queued on each outermost transaction, by bus: a batch announces each change once. */
const queued = new WeakMap<Announcer, WeakMap<Tx, Set<string>>>();

/**
 * Announces `event` once the change made through `db` has committed (never after a rollback). The
 * same event queued twice in one transaction (an apply that upserts eight environments) goes out once.
 */
export async function announceAfterCommit(db: Queryable, bus: Announcer, event: Invalidation): Promise<void> {
  if (isTransaction(db)) {
    let root: Tx = db;
    while (root.parentTransaction) root = root.parentTransaction;
    const byTransaction = queued.get(bus) ?? new WeakMap<Tx, Set<string>>();
    queued.set(bus, byTransaction);
    const events = byTransaction.get(root) ?? new Set<string>();
    byTransaction.set(root, events);
    const key = JSON.stringify(event);
    if (events.has(key)) return;
    events.add(key);
  }
  await afterCommit(db, () => bus.announce(event));
}
