import { createHash } from 'node:crypto';
import type { Queryable, Tx } from './db/knex';
import { inTransaction } from './db/transaction';
import { ApiError } from './errors';
import { canonicalJson } from './canonical-json';

/** How long a key's first answer is kept for replays (documented in docs/api-conventions.md). */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

/**
 * The record's two statements, written once: runIdempotent runs them, and the bench's pgbench scripts
 * (test/bench/pgbench.ts) run the same text around the effects they compare with.
 */
export const IDEMPOTENCY_CLAIM_SQL =
  'INSERT INTO idempotency_records (environment_id, scope, key, fingerprint) VALUES (?, ?, ?, ?) ON CONFLICT (environment_id, scope, key) DO NOTHING RETURNING key';
export const IDEMPOTENCY_ANSWER_SQL = 'UPDATE idempotency_records SET status = ?, body = ? WHERE environment_id = ? AND scope = ? AND key = ?';

export const IDEMPOTENCY_CONFLICT_MESSAGE = 'This Idempotency-Key was already used for a different request.';

export interface IdempotentAnswer {
  status: number;
  body: unknown;
}

export interface IdempotencyScope {
  environmentId: number;
  /** The player for player tokens, `server` for server keys: keys never collide across callers. */
  scope: string;
  key: string;
  /** A digest of what makes the request this request: method, route, path parameters, query, body. */
  fingerprint: string;
}

/** A digest of the request's parts; object keys are sorted, so a retry re-serialised in another order still matches. */
export function fingerprintOf(parts: unknown[]): string {
  return createHash('sha256').update(canonicalJson(parts)).digest('base64url');
}

/**
 * Runs `effect` at most once per key. The key's record is claimed by an INSERT in the same transaction
 * as the effect (the caller's when `db` is one): a concurrent duplicate blocks on the row until the
 * first commits, then replays its answer; if the first fails (a refusal or a fault), its transaction
 * rolls back, the claim with it, and the key is free again. The effect hands `trx` to every core
 * function it calls, so what they write and announce (after commit) stands or falls with the record.
 * The same key with another fingerprint is `idempotency-conflict`.
 */
export async function runIdempotent(
  db: Queryable,
  scope: IdempotencyScope,
  effect: (trx: Tx) => Promise<IdempotentAnswer>,
): Promise<IdempotentAnswer & { replayed: boolean }> {
  return inTransaction(db, async (trx) => {
    const { rows: claimed } = await trx.raw(IDEMPOTENCY_CLAIM_SQL, [scope.environmentId, scope.scope, scope.key, scope.fingerprint]);
    if (claimed.length === 0) {
      const record = await trx('idempotency_records')
        .where({ environment_id: scope.environmentId, scope: scope.scope, key: scope.key })
        .first();
      if (record.fingerprint !== scope.fingerprint) {
        throw new ApiError('idempotency-conflict', IDEMPOTENCY_CONFLICT_MESSAGE);
      }
      return { status: record.status as number, body: record.body, replayed: true };
    }
    const answer = await effect(trx);
    await trx.raw(IDEMPOTENCY_ANSWER_SQL, [answer.status, JSON.stringify(answer.body ?? null), scope.environmentId, scope.scope, scope.key]);
    return { ...answer, replayed: false };
  });
}

export async function pruneIdempotencyRecords(db: Queryable): Promise<number> {
  return db('idempotency_records').where('created_at', '<', new Date(Date.now() - IDEMPOTENCY_RETENTION_HOURS * 3600_000)).delete();
}
