/**
 * The spec's rules for every game service (§4 Game services "Rules", §8), written once for the
 * manifest schemas, the routes and the command line: keys, and the amounts that move.
 */
import { Type } from '@sinclair/typebox';

/** Keys (currencies, item types, unlocks, `reason`…): 1-128 letters, digits and `. _ : -`, starting with a letter or digit. */
export const GAME_KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]*$';
export const GAME_KEY_MAX = 128;
export const GameKey = (description: string) => Type.String({ minLength: 1, maxLength: GAME_KEY_MAX, pattern: GAME_KEY_PATTERN, description });
const GAME_KEY = new RegExp(GAME_KEY_PATTERN);
export function isGameKey(text: string): boolean {
  return text.length <= GAME_KEY_MAX && GAME_KEY.test(text);
}

/** Amounts: whole numbers 1 to 1,000,000,000. */
export const AMOUNT_MAX = 1_000_000_000;
export const Amount = (description = 'a whole number 1 to 1,000,000,000') => Type.Integer({ minimum: 1, maximum: AMOUNT_MAX, description });

/** The largest stored figure of a balance: every balance reaches clients as an exact JSON number (docs/economy.md). */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;
