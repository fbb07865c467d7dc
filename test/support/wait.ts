import type { Knex } from 'knex';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `check` holds, for at most `withinMs`; answers how long it took. Bounded: it always ends. */
export async function eventually(check: () => Promise<boolean>, withinMs: number, stepMs = 25): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > withinMs) throw new Error(`condition not met within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * Every statement started on `db`'s pool has finished: none holds a connection or waits for one.
 * A write a process starts off a request's path (and before answering it) has landed once the
 * answer is in and this holds, so a test can say no stray one came without waiting a while.
 */
export async function poolSettled(db: Knex, withinMs = 5_000): Promise<void> {
  const pool = (db.client as { pool: { numUsed(): number; numPendingAcquires(): number; numPendingCreates(): number } }).pool;
  await eventually(async () => pool.numUsed() === 0 && pool.numPendingAcquires() === 0 && pool.numPendingCreates() === 0, withinMs, 5);
}
