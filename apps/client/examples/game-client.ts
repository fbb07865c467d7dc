// A game client's first minutes with @hearth/client: a player session from the tokens its game server
// handed over, refreshed by the SDK; the player's profile, the flags, the wallet page by page, and a
// refusal handled by its code.
// Run: HEARTH_URL=http://127.0.0.1:8080/v1 HEARTH_TOKENS='<the tokens JSON>' node --import tsx game-client.ts
import { Hearth, type PlatformTokens } from '@hearth/client';

const hearth = new Hearth({ baseUrl: process.env.HEARTH_URL ?? 'http://127.0.0.1:8080/v1' });

async function main(): Promise<void> {
  const tokens = JSON.parse(process.env.HEARTH_TOKENS ?? '{}') as PlatformTokens;
  // Refreshed before the access token expires; keep the newest refresh token for the next start.
  const player = hearth.player(tokens, { onTokens: (fresh) => console.error(`new tokens, expiring in ${fresh.expiresIn} s`) });

  const me = await player.call('get', '/players/{playerId}', { params: { path: { playerId: 'me' } } });
  console.error(`signed in as ${me.displayName}`);

  const flags = await player.call('get', '/flags');
  const shopOpen = flags.items.some((flag) => flag.name === 'new_shop' && flag.isEnabled);
  console.error(`new shop: ${shopOpen ? 'open' : 'closed'}`);

  // Every item of a paged read, the SDK following `next`.
  for await (const balance of player.items('/players/{playerId}/inventories/{inventory}/balances', {
    params: { path: { playerId: 'me', inventory: 'account' } },
  })) {
    console.error(`${balance.currencyKey}: ${balance.amount}`);
  }

  // A player may not read another player: a typed refusal, not an exception to guess at.
  const other = await player.attempt('get', '/players/{playerId}', { params: { path: { playerId: 'someone-else' } } });
  if (!other.ok) console.error(`refused: ${other.refusal.code}`);

  process.stdout.write(JSON.stringify({ player: me.id, shopOpen, refused: other.ok ? null : other.refusal.code }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
