/**
 * The money engine's TypeScript side (docs/architecture.md "Money engine"): every move of value runs
 * as ONE statement of the engine's database functions (apps/core/src/<area>/sql/, the entry
 * economy/sql/hearth_move.sql),
 * which hold the rules (the inventory chosen, caps and allowances, the ledger, the idempotency
 * record). This module only describes the move (its kind and request), runs the statement, and turns
 * a refusal into the error the refusal table words (./refusals.ts). A new kind of move is a line of
 * MOVE_KINDS (./move-kinds.ts) and its function's file, not a new protocol.
 */
import type { Queryable } from '../db/knex';
import { preparedStatement, runStatement } from '../db/statement';
import type { IdempotencyScope } from '../idempotency';
import { MAX_BALANCE } from '../contract/game-keys';
import type { EnvironmentContext } from '../tenancy/environments';
import type { EngineMoveKind } from './move-kinds';
import { engineError } from './refusals';

/** The engine's kinds of move: one list, MOVE_KINDS (./move-kinds.ts), which also writes the dispatcher. */
export type { EngineMoveKind } from './move-kinds';

/** A move without an Idempotency-Key: in the caller's transaction, or by itself in autocommit. */
export const ENGINE_MOVE = preparedStatement('hearth_move', 'SELECT hearth_move(?, ?, ?, ?, ?) AS answer');

/**
 * A move at most once per Idempotency-Key: the record's claim, the move and the record's answer in
 * one statement. A retry answers what the first answered (`replayed`); the key used for another
 * request is `idempotency-conflict`; a refusal rolls the claim back with the move (the key is free).
 */
export const IDEMPOTENT_MOVE = preparedStatement('hearth_idempotent_move', 'SELECT replayed, answer FROM hearth_idempotent_move(?, ?, ?, ?, ?, ?, ?, ?)');

/** What a move answered (as the API answers it), and whether it was a replay of a first answer. */
export interface EngineAnswer<Answer> {
  answer: Answer;
  replayed: boolean;
}

/** The request of a move as the engine reads it (JSON): absent fields are left out, a null realmId names the account. */
export function engineRequest(request: object): string {
  return JSON.stringify(request);
}

/**
 * Runs one move of value and answers what the API answers (kept by the idempotency record as it is),
 * and whether it was a replay. Refusals are thrown as the table words them, and wrote nothing.
 */
export async function runEngineMove<Answer>(
  db: Queryable,
  env: EnvironmentContext,
  playerId: string,
  kind: EngineMoveKind,
  request: object,
  record?: IdempotencyScope,
): Promise<EngineAnswer<Answer>> {
  try {
    if (record === undefined) {
      const [{ answer }] = await runStatement<{ answer: Answer }>(db, ENGINE_MOVE, [env.id, playerId, kind, engineRequest(request), MAX_BALANCE.toString()]);
      return { answer, replayed: false };
    }
    if (record.environmentId !== env.id) throw new Error('an idempotency record of another environment');
    const [row] = await runStatement<EngineAnswer<Answer>>(db, IDEMPOTENT_MOVE, [
      record.scope,
      record.key,
      record.fingerprint,
      env.id,
      playerId,
      kind,
      engineRequest(request),
      MAX_BALANCE.toString(),
    ]);
    return row;
  } catch (err) {
    throw engineError(err, { playerId, ...request });
  }
}
