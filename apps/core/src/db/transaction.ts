/**
 * One transaction per effect, whoever opens it. A core function that writes takes its database from
 * its caller (the pool, or the caller's transaction) and runs its statements through `inTransaction`:
 * on the pool that opens a transaction, inside a transaction it joins it (no savepoint), so an effect,
 * its ledger and its idempotency record commit or roll back together whatever a route calls. What
 * must happen only once the change is durable (announcements to other processes, events) is queued
 * with `afterCommit` and runs after the outermost commit, never after a rollback.
 * The shape of Nakama's core functions, which take their `db`, and supabase/storage's withTransaction.
 */
import type { Knex } from 'knex';
import type { Queryable, Tx } from './knex';

type AfterCommit = () => unknown;

/** The after-commit actions of each transaction `inTransaction` opened, by that transaction. */
const pending = new WeakMap<Tx, AfterCommit[]>();

/** Runs `work` in the caller's transaction when `db` is one, else in a new transaction on the pool. */
export async function inTransaction<T>(db: Queryable, work: (trx: Tx) => Promise<T>): Promise<T> {
  if (isTransaction(db)) return work(db);
  const actions: AfterCommit[] = [];
  const result = await (db as Knex).transaction((trx) => {
    pending.set(trx, actions);
    return work(trx);
  });
  for (const action of actions) await action();
  return result;
}

/**
 * Runs `action` once the change made through `db` is committed: at once on the pool (each statement
 * has committed by itself), after the outermost commit inside a transaction, not at all on rollback.
 * The caller of the outermost `inTransaction` waits for it, so an answer leaves after its announcements.
 */
export async function afterCommit(db: Queryable, action: AfterCommit): Promise<void> {
  if (!isTransaction(db)) {
    await action();
    return;
  }
  let root: Tx = db;
  while (root.parentTransaction) root = root.parentTransaction;
  const actions = pending.get(root);
  if (actions) actions.push(action);
  // A transaction opened by knex itself, not by inTransaction: after its commit, unawaited.
  else
    root.executionPromise.then(
      () => action(),
      () => undefined,
    );
}

export function isTransaction(db: Queryable): db is Tx {
  return (db as Tx).isTransaction === true;
}
