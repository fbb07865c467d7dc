// A game server's first minutes with @hearth/client: sign a player in, give them currency, read
// their balance and the feature flags, and hand the player's tokens to the game client.
// Run: HEARTH_URL=http://127.0.0.1:8080/v1 HEARTH_SERVER_KEY=hsk_... node --import tsx game-server.ts
import { Hearth } from '@hearth/client';

const hearth = new Hearth({ baseUrl: process.env.HEARTH_URL ?? 'http://127.0.0.1:8080/v1' });
const server = hearth.server(process.env.HEARTH_SERVER_KEY ?? '');

async function main(): Promise<void> {
  // The server has checked who the player is (its own login); Hearth makes or finds the player.
  const tokens = await server.signInPlayer('account-4711', 'Ann');
  const playerId = tokens.player.id;

  // A move of value: the SDK sends an Idempotency-Key and retries with the same key after a network
  // error, a 503 or a 429, so the player is credited exactly once.
  const movement = await server.call('post', '/players/{playerId}/currencies/{currencyKey}/credit', {
    params: { path: { playerId, currencyKey: 'gold' } },
    body: { amount: 100, reason: 'welcome-gift' },
  });
  console.error(`credited ${movement.amount} gold; balance ${movement.balanceAfter}`);

  // A refusal is an answer to handle: `attempt` types `code` with this operation's codes.
  const debit = await server.attempt('post', '/players/{playerId}/currencies/{currencyKey}/debit', {
    params: { path: { playerId, currencyKey: 'gold' } },
    body: { amount: 1000, reason: 'too-expensive' },
  });
  if (!debit.ok && debit.refusal.code === 'insufficient-balance') console.error(`refused: holds ${debit.refusal.details?.held}`);

  // Conditional reads are cached by ETag: asking again costs a 304, not a body.
  const flags = await server.call('get', '/flags');
  console.error(`flags: ${flags.items.map((f) => `${f.name}=${f.isEnabled}`).join(', ')}`);

  // The game client gets the player's tokens (over the game's own connection), never the server key.
  process.stdout.write(JSON.stringify(tokens));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
