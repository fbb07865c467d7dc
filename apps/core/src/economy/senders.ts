/**
 * Who may send what in a request that moves value (docs/economy.md "Who may send what"). A game
 * server's key may send every field a request has; a player's token not the fields that are the game
 * server's word (an allowance on what the player may spend, a card's template and data), and not the
 * request at all where the environment keeps it to its servers (a game that unlocks its players' skill
 * nodes itself). Each service that takes a request from either credential declares its rule once, as a
 * SenderRule, and checks it before anything else; the API only says who sent the request.
 */
import { refuse } from '../errors';
import type { EnvironmentContext } from '../tenancy/environments';

/** Who sent a request: a player's token, or a game server's key. */
export type Sender = 'player' | 'server';

/** What a player's token may not send in a request of type `R`. */
export interface SenderRule<R> {
  /** The fields only a server key sends; a refusal names the first of them the request has, in this order. */
  serverOnly: readonly (keyof R & string)[];
  /** Why a player may not send the request at all in `env`, or undefined where a player may. */
  playerRefused?: (env: EnvironmentContext) => string | undefined;
}

/** `forbidden` when a player sent what `rule` keeps to servers; a server key passes. */
export function checkSender<R extends object>(rule: SenderRule<R>, by: Sender, env: EnvironmentContext, request: R): void {
  if (by === 'server') return;
  const refused = rule.playerRefused?.(env);
  if (refused !== undefined) throw refuse.forbidden(refused);
  const field = rule.serverOnly.find((name) => request[name] !== undefined);
  if (field !== undefined) throw refuse.forbidden(`Only a server key sends ${field}.`);
}
