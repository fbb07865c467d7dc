import type { Db, Queryable } from '../db/knex';
import { refuse } from '../errors';
import { randomId } from '../ids';
import { TtlCache } from '../cache';
import type { InvalidationBus } from '../invalidation';
import type { EnvironmentContext } from '../tenancy/environments';
import { filterWords } from './word-filter';

/** PlatformPlayer (spec §2). */
export interface PlatformPlayer {
  id: string;
  displayName: string | null;
  createdAt: string;
}

/** What token checks need about a player; cached per process, dropped on sign-out or deletion. */
export interface PlayerState {
  environmentId: number;
  /** Tokens with `iat` before this (seconds) are refused: sign out everywhere. */
  tokensValidAfter: number;
}

export type IdentityProvider = 'server' | 'idp';

function toPlayer(row: Record<string, unknown>): PlatformPlayer {
  return {
    id: row.id as string,
    displayName: (row.display_name as string | null) ?? null,
    createdAt: new Date(row.created_at as string).toISOString(),
  };
}

export class PlayerService {
  private states = new TtlCache<string, PlayerState | null>(30_000, 500_000);

  constructor(private readonly db: Db, private readonly bus: InvalidationBus) {
    bus.on((event) => {
      if (event.kind === 'player') this.states.delete(event.playerId);
    });
  }

  /** For token checks on every request: served from memory after the first look. */
  async state(playerId: string): Promise<PlayerState | null> {
    const hit = this.states.get(playerId);
    if (hit !== undefined) return hit;
    const row = await this.db('players').where({ id: playerId }).first('environment_id', 'tokens_valid_after');
    const state = row ? { environmentId: Number(row.environment_id), tokensValidAfter: Number(row.tokens_valid_after) } : null;
    this.states.set(playerId, state);
    return state;
  }

  async get(env: EnvironmentContext, playerId: string, db: Queryable = this.db): Promise<PlatformPlayer> {
    const row = await db('players').where({ id: playerId, environment_id: env.id }).first();
    if (!row) throw refuse.notFound('The player');
    return toPlayer(row);
  }

  /**
   * Finds the player behind a provider's subject, or makes one (201) while the environment is below
   * its plan's player cap. The environment row is locked while a player is made, so concurrent
   * first sign-ins neither pass the cap nor make two players for one subject.
   */
  async signIn(
    env: EnvironmentContext,
    provider: IdentityProvider,
    subject: string,
    displayName?: string,
  ): Promise<{ player: PlatformPlayer; created: boolean; tokensValidAfter: number }> {
    const name = displayName === undefined ? undefined : filterWords(displayName, env.wordFilter);
    const existing = await this.findByIdentity(this.db, env, provider, subject, name);
    if (existing) return { ...existing, created: false };

    return this.db.transaction(async (trx) => {
      const [lockedEnv] = (await trx.raw('SELECT player_count FROM environments WHERE id = ? FOR UPDATE', [env.id])).rows;
      const again = await this.findByIdentity(trx, env, provider, subject, name);
      if (again) return { ...again, created: false };
      const cap = env.plan.playersPerEnvironment;
      if (Number(lockedEnv.player_count) >= cap) {
        throw refuse.conflict(`This environment is full: its plan allows ${cap} players.`, { limit: cap });
      }
      const [row] = await trx('players')
        .insert({ id: randomId(22), environment_id: env.id, display_name: name ?? null })
        .returning('*');
      await trx('player_identities').insert({ environment_id: env.id, provider, subject, player_id: row.id });
      await trx('environments').where({ id: env.id }).increment('player_count', 1);
      return { player: toPlayer(row), created: true, tokensValidAfter: 0 };
    });
  }

  private async findByIdentity(
    db: Queryable,
    env: EnvironmentContext,
    provider: IdentityProvider,
    subject: string,
    displayName: string | undefined,
  ): Promise<{ player: PlatformPlayer; tokensValidAfter: number } | null> {
    const found = await db('player_identities as i')
      .join('players as p', 'p.id', 'i.player_id')
      .where({ 'i.environment_id': env.id, 'i.provider': provider, 'i.subject': subject })
      .first('p.*');
    if (!found) return null;
    let row = found;
    if (displayName !== undefined && displayName !== found.display_name) {
      [row] = await db('players').where({ id: found.id }).update({ display_name: displayName }).returning('*');
    }
    return { player: toPlayer(row), tokensValidAfter: Number(found.tokens_valid_after) };
  }

  async rename(env: EnvironmentContext, playerId: string, displayName: string): Promise<PlatformPlayer> {
    const [row] = await this.db('players')
      .where({ id: playerId, environment_id: env.id })
      .update({ display_name: filterWords(displayName, env.wordFilter) })
      .returning('*');
    if (!row) throw refuse.notFound('The player');
    return toPlayer(row);
  }

  /** Ends every token the player holds: tokens issued before the next whole second are refused. */
  async signOutEverywhere(env: EnvironmentContext, playerId: string): Promise<void> {
    const cutoff = Math.floor(Date.now() / 1000) + 1;
    const updated = await this.db('players')
      .where({ id: playerId, environment_id: env.id })
      .update({ tokens_valid_after: this.db.raw('GREATEST(tokens_valid_after, ?)', [cutoff]) });
    if (updated === 0) throw refuse.notFound('The player');
    await this.bus.announce({ kind: 'player', playerId, reason: 'signed-out' });
  }

  /** Deletes the player and, by cascade, everything they hold; their tokens stop working. */
  async delete(env: EnvironmentContext, playerId: string): Promise<void> {
    const deleted = await this.db.transaction(async (trx) => {
      await trx.raw('SELECT id FROM environments WHERE id = ? FOR UPDATE', [env.id]);
      const n = await trx('players').where({ id: playerId, environment_id: env.id }).delete();
      if (n > 0) await trx('environments').where({ id: env.id }).decrement('player_count', n);
      return n;
    });
    if (deleted === 0) throw refuse.notFound('The player');
    await this.bus.announce({ kind: 'player', playerId, reason: 'deleted' });
  }
}
