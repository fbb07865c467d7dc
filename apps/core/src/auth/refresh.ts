import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { Refusal, refuse } from '../errors';
import type { Authenticator } from './authenticate';
import { deriveKey, seal, unseal } from '../sealing';
import type { TokenService } from './tokens';
import type { PlayerService } from '../players/service';
import type { EnvironmentContext } from '../tenancy/environments';

/** A refresh token presented again within this window answers what it answered the first time. */
export const REFRESH_REPLAY_SECONDS = 60;

export type { PlatformTokens } from '../shapes';
import type { PlatformTokens } from '../shapes';

/**
 * Refresh rotation: a refresh token works once. Its use is recorded (with the sealed answer) in the
 * same statement that claims it, so two concurrent uses cannot both mint tokens; the loser of the
 * race, or a retry within 60 s, gets the first answer again.
 */
export class RefreshService {
  private readonly sealingKey: Buffer;

  constructor(
    masterKey: Buffer,
    private readonly tokens: TokenService,
    private readonly authenticator: Authenticator,
    private readonly players: PlayerService,
  ) {
    this.sealingKey = deriveKey(masterKey, 'refresh-answers');
  }

  /** Checks the token and answers the environment it belongs to (for review checks) and the new tokens. */
  async refresh(db: Queryable, refreshToken: string, enter: (env: EnvironmentContext, playerId: string) => Promise<void>): Promise<PlatformTokens> {
    const claims = await this.tokens.verify(refreshToken);
    if (!claims || claims.type !== 'refresh') throw refuse.unauthorized('The refresh token is not valid.');
    const principal = await this.authenticator.playerPrincipal(claims);
    if (!principal) throw refuse.unauthorized('The refresh token is no longer valid; sign in again.');
    const env = principal.environment;
    await enter(env, claims.sub);

    return inTransaction(db, async (trx) => {
      const used = await trx('refresh_tokens_used').where({ jti: claims.jti }).forUpdate().first();
      if (used) return this.replay(used);
      const player = await this.players.get(trx, env, claims.sub).catch((err) => {
        if (err instanceof Refusal && err.code === 'not-found') throw refuse.unauthorized('The player no longer exists.');
        throw err;
      });
      const state = await this.players.state(claims.sub);
      const answer: PlatformTokens = { ...(await this.tokens.issue(player.id, env.appKey, state?.tokensValidAfter ?? 0)), player };
      const inserted = await trx('refresh_tokens_used')
        .insert({ jti: claims.jti, player_id: player.id, answer_encrypted: seal(this.sealingKey, JSON.stringify(answer)) })
        .onConflict('jti')
        .ignore()
        .returning('jti');
      if (inserted.length === 0) {
        // Another process claimed it between our read and insert: answer what it answered.
        const row = await trx('refresh_tokens_used').where({ jti: claims.jti }).first();
        return this.replay(row);
      }
      await this.players.seen(trx, player.id);
      return answer;
    });
  }

  private replay(row: { used_at: string | Date; answer_encrypted: string }): PlatformTokens {
    const age = (Date.now() - new Date(row.used_at).getTime()) / 1000;
    if (age > REFRESH_REPLAY_SECONDS) throw refuse.unauthorized('The refresh token was already used; sign in again.');
    return JSON.parse(unseal(this.sealingKey, row.answer_encrypted)) as PlatformTokens;
  }

  /** Removes records past the replay window (the tokens themselves expire on their own). */
  async prune(db: Queryable): Promise<number> {
    return db('refresh_tokens_used')
      .where('used_at', '<', new Date(Date.now() - REFRESH_REPLAY_SECONDS * 2000))
      .delete();
  }
}
