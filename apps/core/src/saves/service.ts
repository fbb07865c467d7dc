/**
 * Player saves (spec §2 Save, §4 "Player saves", §8 limits): JSON slots per player, each write adding
 * one to the slot's version, held to two quotas (the player's 5 MB and the environment's plan).
 *
 * Concurrency (docs/saves.md): a write or delete locks, in the one order every area uses, the
 * environment row (its byte counter), the player row (their byte counter), then the slot; it checks the
 * version and both quotas against what it holds locked and updates the slot and both counters in the
 * same transaction — one statement (hearth_save_write, hearth_save_delete), so the locks are held for
 * no client round trip. So two writers never answer the same version, never lose each other's update
 * and never pass a quota together, and the counters always equal the sum of the slots' sizes.
 */
import type { Queryable } from '../db/knex';
import { preparedStatement, runStatement } from '../db/statement';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { type CursorCodec, keysetPage } from '../pagination';
import type { PageRequest } from '../shapes/common';
import { Telemetry } from '../process/telemetry';
import type { EnvironmentContext } from '../tenancy/environments';
import { SAVE_LIMITS, type Save, type SaveEntry, type SaveList, type SaveWriteRequest } from '../shapes/saves';

/**
 * A save write: one statement, the function of migrations/20261123140000_save_write_function.ts, which
 * locks, checks and writes (docs/saves.md). Exported so `make bench` runs the very same SQL under
 * pgbench (test/bench/pgbench.ts). Parameters: environment id, player id, key, size in bytes, the
 * compact JSON text, the expected version (null: any), the player's and the environment's byte limits.
 */
export const SAVE_WRITE = preparedStatement(
  'hearth_save_write',
  'SELECT outcome, version, size_bytes, updated_at FROM hearth_save_write(?, ?, ?, ?, ?::json, ?, ?, ?)',
);

/** What hearth_save_write answers; the refusals in the order it checks them. */
type SaveWriteOutcome = 'created' | 'replaced' | 'player-not-found' | 'version-conflict' | 'player-quota' | 'environment-quota';

/** Who writes: a server key may write every slot, a player token all but `server:` slots. */
export type SaveWriter = 'server' | 'player';

/** What a write sends: the route validates it with this shape, the service is typed by it. */
export type SaveWrite = SaveWriteRequest;

interface EntryRow {
  key: string;
  version: string | number;
  size_bytes: number;
  updated_at: Date | string;
}

const toEntry = (row: EntryRow): SaveEntry => ({
  key: row.key,
  version: Number(row.version),
  sizeBytes: Number(row.size_bytes),
  updatedAt: new Date(row.updated_at).toISOString(),
});

/** `forbidden` for a player token writing or deleting a `server:` slot (it may read them). */
function checkWriter(writer: SaveWriter, key: string): void {
  if (writer === 'player' && key.startsWith(SAVE_LIMITS.serverPrefix)) {
    throw refuse.forbidden('Slots whose key starts `server:` are written and deleted only with a server key.');
  }
}

/** The key rule (the route's schema says the same; this holds it for every caller). */
function checkKey(key: string): void {
  if (!SAVE_LIMITS.keyPattern.test(key)) throw refuse.invalid('key', 'A save key is 1-120 characters of letters, digits and . _ : -');
}

/** The value's compact JSON text, or `invalid-request` naming body.data for null or a value over 256 KB. */
export function compactSaveValue(data: unknown): { text: string; sizeBytes: number } {
  if (data === null || data === undefined) throw refuse.invalid('data', 'A save value is any JSON value but null.');
  const text = JSON.stringify(data);
  const sizeBytes = Buffer.byteLength(text, 'utf8');
  if (sizeBytes > SAVE_LIMITS.valueBytes) {
    throw refuse.invalid('data', `A save value is at most ${SAVE_LIMITS.valueBytes} bytes written compactly; this one is ${sizeBytes}.`);
  }
  return { text, sizeBytes };
}

export class SaveService {
  constructor(
    private readonly cursors: CursorCodec,
    private readonly telemetry = new Telemetry(),
  ) {}

  /** SaveList: a page of the player's slots by key (byte order) with the player's total bytes. */
  async list(db: Queryable, env: EnvironmentContext, playerId: string, query: PageRequest): Promise<SaveList> {
    const player = await db('players').where({ id: playerId, environment_id: env.id }).first('save_bytes');
    if (!player) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
    const page = await keysetPage(
      this.cursors,
      `saves|${env.id}|${playerId}`,
      query,
      (after: string | undefined, take) => {
        const q = db('player_saves')
          .where({ player_id: playerId, environment_id: env.id })
          .select('key', 'version', 'size_bytes', 'updated_at')
          .orderBy('key')
          .limit(take);
        return after === undefined ? q : q.andWhere('key', '>', after);
      },
      (row: EntryRow) => row.key,
      toEntry,
    );
    return { ...page, totalBytes: Number(player.save_bytes), limitBytes: SAVE_LIMITS.playerBytes };
  }

  /** Save, or `not-found` for a slot never written (or emptied, or of another environment's player). */
  async get(db: Queryable, env: EnvironmentContext, playerId: string, key: string): Promise<Save> {
    const row = await db('player_saves')
      .where({ player_id: playerId, key, environment_id: env.id })
      .first('key', 'version', 'size_bytes', 'data', 'created_at', 'updated_at');
    if (!row) throw refuse.notFound('The save', { key, field: 'key' });
    return { ...toEntry(row), data: row.data, createdAt: new Date(row.created_at).toISOString() };
  }

  /**
   * Writes a slot: the new SaveEntry and whether the write made the slot (201) or replaced it (200).
   * Refusals, in this order: the value (invalid-request), a player writing a `server:` slot
   * (forbidden), the player (not-found), the version (conflict), the quotas (quota-exceeded).
   */
  async write(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    key: string,
    write: SaveWrite,
    writer: SaveWriter,
  ): Promise<{ entry: SaveEntry; created: boolean }> {
    checkKey(key);
    const { text, sizeBytes } = compactSaveValue(write.data);
    checkWriter(writer, key);
    const environmentLimit = env.plan.playerDataBytesPerEnvironment;
    // One statement: atomic by itself on the pool, or part of the caller's transaction.
    const [outcome] = await runStatement<EntryRow & { outcome: SaveWriteOutcome }>(db, SAVE_WRITE, [
      env.id,
      playerId,
      key,
      sizeBytes,
      text,
      write.expectedVersion ?? null,
      SAVE_LIMITS.playerBytes,
      environmentLimit,
    ]);
    switch (outcome.outcome) {
      case 'created':
      case 'replaced':
        this.telemetry.saveWritten(sizeBytes, outcome.outcome === 'created');
        return { entry: toEntry({ ...outcome, key }), created: outcome.outcome === 'created' };
      case 'player-not-found':
        throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
      case 'version-conflict': {
        const currentVersion = Number(outcome.version);
        throw refuse.conflict(
          currentVersion > 0
            ? `The save is at version ${currentVersion}, not ${write.expectedVersion}: it was written by somebody else.`
            : `The save does not exist, so it is not at version ${write.expectedVersion}.`,
        );
      }
      case 'player-quota':
        throw refuse.quota('playerDataBytesPerPlayer', SAVE_LIMITS.playerBytes, `The player's saves would pass ${SAVE_LIMITS.playerBytes} bytes.`);
      case 'environment-quota':
        throw refuse.quota('playerDataBytes', environmentLimit, "The environment's saves would pass its plan's limit.");
      default:
        throw new Error(`hearth_save_write answered an unknown outcome ${String(outcome.outcome)}`);
    }
  }

  /** Empties a slot and gives back its bytes; done whether or not it held anything. `not-found` for an unknown player. */
  async delete(db: Queryable, env: EnvironmentContext, playerId: string, key: string, writer: SaveWriter): Promise<void> {
    checkKey(key);
    checkWriter(writer, key);
    // One statement (hearth_save_delete): the locks in their order, the slot and its bytes given back.
    const found = (await db.raw('SELECT hearth_save_delete(?, ?, ?) AS found', [env.id, playerId, key])).rows[0].found;
    if (!found) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
  }
}

/**
 * The saves step of deleting a player (deletePlayer holds the environment's row lock): locks the
 * player's row and gives their saved bytes back to the environment; the cascade removes the slots.
 */
export async function releaseSavesOfDeletedPlayer(db: Queryable, env: EnvironmentContext, playerId: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    const player = (await trx.raw('SELECT save_bytes FROM players WHERE id = ? AND environment_id = ? FOR UPDATE', [playerId, env.id])).rows[0];
    if (!player || Number(player.save_bytes) === 0) return;
    await trx.raw('UPDATE environments SET player_save_bytes = player_save_bytes - ? WHERE id = ?', [player.save_bytes, env.id]);
  });
}
