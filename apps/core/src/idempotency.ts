import { createHash } from 'node:crypto';
import type { Queryable, Tx } from './db/knex';
import { inTransaction } from './db/transaction';
import { Refusal } from './errors';
import { canonicalJson } from './canonical-json';

/** How long a key's first answer is kept for replays (documented in docs/api-conventions.md). */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

/**
 * The record's two statements: the protocol's rules live in PostgreSQL
 * (migrations/20261126180000_one_idempotency_protocol.ts), once for both ways a record is kept: the
 * money engine's one statement (hearth_idempotent_move) and runIdempotent below.
 */
export const IDEMPOTENCY_CLAIM_SQL = 'SELECT claimed, conflict, status, body FROM hearth_idempotency_claim(?, ?, ?, ?)';
export const IDEMPOTENCY_ANSWER_SQL = 'SELECT hearth_idempotency_answer(?, ?, ?, ?, ?)';

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
    const { rows } = await trx.raw(IDEMPOTENCY_CLAIM_SQL, [scope.environmentId, scope.scope, scope.key, scope.fingerprint]);
    // A record found is a committed one, and a record commits with its answer: status and body are there.
    const claim = rows[0] as { claimed: boolean; conflict: boolean; status: number; body: unknown };
    if (!claim.claimed) {
      if (claim.conflict) throw new Refusal('idempotency-conflict', IDEMPOTENCY_CONFLICT_MESSAGE);
      return { status: claim.status, body: claim.body, replayed: true };
    }
    const answer = await effect(trx);
    await trx.raw(IDEMPOTENCY_ANSWER_SQL, [scope.environmentId, scope.scope, scope.key, answer.status, JSON.stringify(answer.body ?? null)]);
    return { ...answer, replayed: false };
  });
}

export async function pruneIdempotencyRecords(db: Queryable): Promise<number> {
  return db('idempotency_records')
    .where('created_at', '<', new Date(Date.now() - IDEMPOTENCY_RETENTION_HOURS * 3600_000))
    .delete();
}
