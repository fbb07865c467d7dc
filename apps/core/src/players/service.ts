import type { Db, Queryable, Tx } from '../db/knex';
import { inTransaction, isTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { randomId } from '../ids';
import { TtlCache } from '../cache';
import { type Clock, systemClock } from '../clock';
import { announceAfterCommit, type Invalidation, type InvalidationBus } from '../invalidation';
import type { EnvironmentContext } from '../tenancy/environments';
import { filterWords } from './word-filter';

// PlatformPlayer (spec §2) is the answer shape's type (shapes/players.ts).
import type { PlatformPlayer } from '../shapes';
import type { RenamePlayerRequest } from '../shapes/players';
export type { PlatformPlayer } from '../shapes';

/** What token checks need about a player; cached per process, dropped on sign-out or deletion. */
export interface PlayerState {
  environmentId: number;
  /** Tokens with `iat` before this (seconds) are refused: sign out everywhere. */
  tokensValidAfter: number;
}

export type IdentityProvider = 'server' | 'idp';

/** Why every process drops its copy of a player. */
export type PlayerChange = Extract<Invalidation, { kind: 'player' }>['reason'];

/** One `players` row as requests need it: token checks and the PlatformPlayer answer. */
interface PlayerRecord extends PlayerState {
  player: PlatformPlayer;
}

const RECORD_COLUMNS = ['id', 'environment_id', 'tokens_valid_after', 'display_name', 'created_at'];

function toPlayer(row: Record<string, unknown>): PlatformPlayer {
  return {
    id: row.id as string,
    displayName: (row.display_name as string | null) ?? null,
    createdAt: new Date(row.created_at as string).toISOString(),
  };
}

/**
 * Players. What requests read on every call (token checks, `GET /players/me`) is cached per process
 * and dropped when any process announces a rename, sign-out or deletion of the player.
 *
 * Every method that reads or writes takes its database first (the pool or the caller's transaction)
 * and writes through `inTransaction`. Only the cache loads on the pool given at construction: it is
 * shared by every request of the process, so what it holds must be committed data, never what one
 * caller's transaction sees. Deleting a player is `deletePlayer` (./deletion.ts): it ends what other
 * areas hold too.
 */
export class PlayerService {
  private readonly records: TtlCache<string, PlayerRecord | null>;
  /** Bumped on every drop: a load that began before a drop must not keep what it read. */
  private drops = 0;

  constructor(
    private readonly pool: Db,
    private readonly bus: InvalidationBus,
    clock: Clock = systemClock,
  ) {
    this.records = new TtlCache(30_000, 500_000, clock);
    bus.on((event) => {
      if (event.kind === 'player') {
        this.drops++;
        this.records.delete(event.playerId);
      }
    });
  }

  /** Served from memory after the first look; `rememberMissing` caches that no such player exists too. */
  private async record(playerId: string, rememberMissing: boolean): Promise<PlayerRecord | null> {
    const hit = this.records.get(playerId);
    if (hit !== undefined) return hit;
    const dropsBefore = this.drops;
    const row = await this.pool('players').where({ id: playerId }).first(RECORD_COLUMNS);
    const record: PlayerRecord | null = row
      ? { environmentId: Number(row.environment_id), tokensValidAfter: Number(row.tokens_valid_after), player: Object.freeze(toPlayer(row)) }
      : null;
    if (this.drops === dropsBefore && (record || rememberMissing)) this.records.set(playerId, record);
    return record;
  }

  /** What `state` answers when it is cached, without waiting; undefined when it is not. */
  peekState(playerId: string): PlayerState | null | undefined {
    return this.records.get(playerId);
  }

  /** For token checks on every request: from the cache (committed data only). */
  async state(playerId: string): Promise<PlayerState | null> {
    return this.record(playerId, true);
  }

  /**
   * A player of the environment: on the pool from the cache (`GET /players/me` waits for nothing once
   * it is there), in a transaction read there, so the caller sees its own uncommitted changes.
   */
  async get(db: Queryable, env: EnvironmentContext, playerId: string): Promise<PlatformPlayer> {
    if (!isTransaction(db)) {
      const record = await this.record(playerId, false);
      if (!record || record.environmentId !== env.id) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
      return record.player;
    }
    const row = await db('players').where({ id: playerId, environment_id: env.id }).first();
    if (!row) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
    return toPlayer(row);
  }

  /**
   * Finds the player behind a provider's subject, or makes one (201) while the environment is below
   * its plan's player cap. The environment row is locked while a player is made, so concurrent
   * first sign-ins neither pass the cap nor make two players for one subject.
   */
  async signIn(
    db: Queryable,
    env: EnvironmentContext,
    provider: IdentityProvider,
    subject: string,
    displayName?: string,
  ): Promise<{ player: PlatformPlayer; created: boolean; tokensValidAfter: number }> {
    const name = displayName === undefined ? undefined : filterWords(displayName, env.wordFilter);
    return inTransaction(db, async (trx) => {
      // Most sign-ins find their player: the environment is locked only to make one.
      const existing = await this.findByIdentity(trx, env, provider, subject, name);
      if (existing) return existing;
      const [lockedEnv] = (await trx.raw('SELECT player_count FROM environments WHERE id = ? FOR NO KEY UPDATE', [env.id])).rows;
      const again = await this.findByIdentity(trx, env, provider, subject, name);
      if (again) return again;
      const cap = env.plan.playersPerEnvironment;
      if (Number(lockedEnv.player_count) >= cap) {
        throw refuse.conflict(`This environment is full: its plan allows ${cap} players.`, { limit: cap });
      }
      const [row] = await trx('players')
        .insert({ id: randomId(22), environment_id: env.id, display_name: name ?? null, last_seen_at: trx.fn.now() })
        .returning('*');
      await trx('player_identities').insert({ environment_id: env.id, provider, subject, player_id: row.id });
      await trx('environments').where({ id: env.id }).increment('player_count', 1);
      return { player: toPlayer(row), created: true, tokensValidAfter: 0 };
    });
  }

  /** The player behind a provider's subject; a sign-in that brings another display name renames them. */
  private async findByIdentity(
    trx: Tx,
    env: EnvironmentContext,
    provider: IdentityProvider,
    subject: string,
    displayName: string | undefined,
  ): Promise<{ player: PlatformPlayer; created: false; tokensValidAfter: number } | null> {
    const found = await trx('player_identities as i')
      .join('players as p', 'p.id', 'i.player_id')
      .where({ 'i.environment_id': env.id, 'i.provider': provider, 'i.subject': subject })
      .first('p.*');
    if (!found) return null;
    const renamed = displayName !== undefined && displayName !== found.display_name;
    // Every sign-in is when the player was last seen (GET /players' lastSeenAt), in the same write as a rename.
    const [row] = await trx('players')
      .where({ id: found.id })
      .update(renamed ? { display_name: displayName, last_seen_at: trx.fn.now() } : { last_seen_at: trx.fn.now() })
      .returning('*');
    if (renamed) await this.announceAfterCommit(trx, found.id as string, 'renamed');
    return { player: toPlayer(row), created: false, tokensValidAfter: Number(found.tokens_valid_after) };
  }

  /** The player was seen now (a token refresh): what GET /players answers as lastSeenAt. */
  async seen(db: Queryable, playerId: string): Promise<void> {
    await db('players').where({ id: playerId }).update({ last_seen_at: db.fn.now() });
  }

  /** PATCH /players/:playerId: the name as asked, word-filtered. */
  async rename(db: Queryable, env: EnvironmentContext, playerId: string, { displayName }: RenamePlayerRequest): Promise<PlatformPlayer> {
    return inTransaction(db, async (trx) => {
      const [row] = await trx('players')
        .where({ id: playerId, environment_id: env.id })
        .update({ display_name: filterWords(displayName, env.wordFilter) })
        .returning('*');
      if (!row) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
      await this.announceAfterCommit(trx, playerId, 'renamed');
      return toPlayer(row);
    });
  }

  /** Ends every token the player holds: tokens issued before the next whole second are refused. */
  async signOutEverywhere(db: Queryable, env: EnvironmentContext, playerId: string): Promise<void> {
    const cutoff = Math.floor(Date.now() / 1000) + 1;
    await inTransaction(db, async (trx) => {
      const updated = await trx('players')
        .where({ id: playerId, environment_id: env.id })
        .update({ tokens_valid_after: trx.raw('GREATEST(tokens_valid_after, ?)', [cutoff]) });
      if (updated === 0) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
      await this.announceAfterCommit(trx, playerId, 'signed-out');
    });
  }

  /**
   * Once the change made in `trx` is committed, every process (this one first) drops its copy of the
   * player; with Redis unreachable the others' copies expire within 30 s.
   */
  announceAfterCommit(trx: Tx, playerId: string, reason: PlayerChange): Promise<void> {
    return announceAfterCommit(trx, this.bus, { kind: 'player', playerId, reason });
  }
}
