/**
 * What the domain tells the processes' metrics, without the core depending on prom-client (the same
 * layering as serving.ts's structural registry): the core reports events to a `Telemetry`, and a
 * process that keeps metrics (the API's ApiMetrics) attaches a sink to it. Every label a sink gets is
 * from a closed set the code names (a move's kind, a statement's kind), never a tenant's id or text.
 */
import type { Db } from '../db/knex';

/** The four currency moves (the `MoveKind` of the economy). */
export type LedgerMoveKind = 'credit' | 'debit' | 'refund' | 'consume';
/** Where a ledger move came from: a move route or command, or a purchase's charge. */
export type LedgerMoveSource = 'move' | 'purchase';

export interface TelemetrySink {
  /** A committed ledger entry (replays are not moves). */
  ledgerMove?(kind: LedgerMoveKind, source: LedgerMoveSource): void;
  /** A save slot written (created or replaced), with its stored size. */
  saveWritten?(bytes: number, created: boolean): void;
}

/** The core's events, fanned out to every attached sink (none: they go nowhere). */
export class Telemetry {
  private readonly sinks = new Set<TelemetrySink>();

  /** Adds a sink; the answer takes it off again. */
  attach(sink: TelemetrySink): () => void {
    this.sinks.add(sink);
    return () => void this.sinks.delete(sink);
  }

  ledgerMove(kind: LedgerMoveKind, source: LedgerMoveSource): void {
    for (const sink of this.sinks) sink.ledgerMove?.(kind, source);
  }

  saveWritten(bytes: number, created: boolean): void {
    for (const sink of this.sinks) sink.saveWritten?.(bytes, created);
  }
}

/**
 * The kind of an SQL statement, from its first keyword: a closed set, so that a query's duration can
 * be labelled by it (never by its text, which holds ids). `call` is a function call statement (SELECT
 * of one of Hearth's functions counts as `select`).
 */
export const STATEMENT_KINDS = ['select', 'insert', 'update', 'delete', 'with', 'begin', 'commit', 'rollback', 'savepoint', 'lock', 'other'] as const;
export type StatementKind = (typeof STATEMENT_KINDS)[number];
const KNOWN_STATEMENTS = new Set<string>(STATEMENT_KINDS);

export function statementKind(sql: string): StatementKind {
  const word = /^\s*\(?\s*([A-Za-z]+)/.exec(sql)?.[1]?.toLowerCase();
  if (word === 'release') return 'savepoint'; // RELEASE SAVEPOINT
  return word !== undefined && KNOWN_STATEMENTS.has(word) ? (word as StatementKind) : 'other';
}

export type QueryObserver = (statement: StatementKind, seconds: number, ok: boolean) => void;

interface KnexQueryEvent {
  __knexQueryUid?: string;
  sql?: string;
}

/** One set of knex listeners per pool, however many observers (each process's metrics, tests). */
const queryObservers = new WeakMap<Db, Set<QueryObserver>>();

/**
 * Calls `observe` with every query's statement kind, duration and outcome, from knex's own query
 * events (a transaction's queries included: knex re-emits them on the pool). The answer stops it.
 */
export function observeQueries(db: Db, observe: QueryObserver): () => void {
  let observers = queryObservers.get(db);
  if (!observers) {
    const set = new Set<QueryObserver>();
    observers = set;
    queryObservers.set(db, set);
    const started = new Map<string, { at: number; statement: StatementKind }>();
    const finish = (ok: boolean) => (_: unknown, query: KnexQueryEvent) => {
      const uid = query?.__knexQueryUid;
      if (uid === undefined) return;
      const start = started.get(uid);
      if (!start) return;
      started.delete(uid);
      const seconds = (performance.now() - start.at) / 1000;
      for (const o of set) o(start.statement, seconds, ok);
    };
    db.on('query', (query: KnexQueryEvent) => {
      if (set.size === 0 || query.__knexQueryUid === undefined) return;
      started.set(query.__knexQueryUid, { at: performance.now(), statement: statementKind(query.sql ?? '') });
    });
    // knex: 'query-response' (response, query, builder), 'query-error' (error, query).
    db.on('query-response', finish(true));
    db.on('query-error', finish(false));
  }
  observers.add(observe);
  return () => void observers.delete(observe);
}

/** The pool's connections now (knex's pool is tarn's): in use, idle, and acquires waiting for one. */
export function poolUsage(db: Db): { used: number; free: number; pending: number } {
  const pool = (db.client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number } }).pool;
  if (!pool) return { used: 0, free: 0, pending: 0 };
  return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() };
}
