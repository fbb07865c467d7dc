/**
 * @hearth/client against a real API (and, for the socket, real `hearth realtime` processes): player
 * and server sessions, refresh, retries with the same Idempotency-Key, conditional reads, typed
 * refusals, pages, and the socket's reconnect after its process is killed.
 */
import type { ChildProcess } from 'node:child_process';
import WebSocket from 'ws';
import { Hearth, HearthRefusal, type PlatformSession, type PlatformTokens, WebStorageEtagStore, type WebSocketConstructor } from '@hearth/client';
import { type Harness, startHarness } from '../support/harness';
import { currency, gameConfig, standardManifests } from '../support/manifests';
import { eventually } from '../support/wait';
import { startRealtimeProcess } from '../realtime/support';
import { FlakyProxy } from './flaky-proxy';

let h: Harness;
let proxy: FlakyProxy;
let serverKey: string;
let n = 0;
const fast = { attempts: 4, baseDelayMs: 20, maxDelayMs: 2000 };

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      currency('gold', { environment: 'alpha-live', name: 'Gold', scope: 'account', kind: 'balance', max: 1_000_000_000_000 }),
      gameConfig('alpha-live-config', {
        environment: 'alpha-live',
        flags: [
          { name: 'new_shop', enabled: true },
          { name: 'beta', enabled: false },
        ],
      }),
    ],
  });
  serverKey = h.serverKeys['alpha-live-key'];
  proxy = await new FlakyProxy(h.base).start();
});

afterAll(async () => {
  await proxy?.stop();
  await h?.close();
});

beforeEach(() => {
  proxy.seen.length = 0;
});

function hearth(options: Partial<ConstructorParameters<typeof Hearth>[0]> = {}): Hearth {
  return new Hearth({ baseUrl: proxy.base, retry: fast, ...options });
}

async function newPlayer(client = hearth()): Promise<{ tokens: PlatformTokens; client: Hearth }> {
  const tokens = await client.server(serverKey).signInPlayer(`sdk-${++n}`, `Player ${n}`);
  proxy.seen.length = 0;
  return { tokens, client };
}

describe('sessions', () => {
  test('a game server signs a player in; the client reads as that player with the tokens handed over', async () => {
    const { tokens, client } = await newPlayer();
    expect(tokens.player.displayName).toBe(`Player ${n}`);
    const player = client.player(tokens);
    const me = await player.call('get', '/players/{playerId}', { params: { path: { playerId: 'me' } } });
    expect(me.id).toBe(tokens.player.id);
    expect(proxy.seen.at(-1)!.headers.authorization).toBe(`Bearer ${tokens.accessToken}`);
  });

  test('an access token about to expire is refreshed before the call; the new tokens are handed to onTokens', async () => {
    const { tokens, client } = await newPlayer();
    const kept: PlatformTokens[] = [];
    const player = client.player({ ...tokens, expiresIn: 30 }, { onTokens: (t) => kept.push(t) });
    await player.call('get', '/players/{playerId}', { params: { path: { playerId: 'me' } } });
    expect(proxy.seen.map((s) => s.path)).toEqual(['/v1/auth/refresh', '/v1/players/me']);
    expect(kept).toHaveLength(1);
    expect(kept[0].refreshToken).not.toBe(tokens.refreshToken);
    expect(player.tokens.accessToken).toBe(kept[0].accessToken);
    expect(proxy.seen[1].headers.authorization).toBe(`Bearer ${kept[0].accessToken}`);
  });

  test('a 401 refreshes once and sends the call again; a refused refresh answers the 401', async () => {
    const { tokens, client } = await newPlayer();
    const player = client.player({ ...tokens, accessToken: `${tokens.accessToken}x` });
    await player.call('get', '/players/{playerId}', { params: { path: { playerId: 'me' } } });
    expect(proxy.seen.map((s) => [s.path, s.status])).toEqual([
      ['/v1/players/me', 401],
      ['/v1/auth/refresh', 200],
      ['/v1/players/me', 200],
    ]);

    // Signed out everywhere: the refresh token is refused, so the call's 401 is the answer (once).
    await player.signOut();
    proxy.seen.length = 0;
    const stale = client.player({ ...player.tokens, accessToken: `${player.tokens.accessToken}x` });
    const outcome = await stale.attempt('get', '/players/{playerId}', { params: { path: { playerId: 'me' } } });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect([outcome.refusal.status, outcome.refusal.code]).toEqual([401, 'unauthorized']);
    expect(proxy.seen.map((s) => [s.path, s.status])).toEqual([
      ['/v1/players/me', 401],
      ['/v1/auth/refresh', 401],
    ]);
  });
});

describe('moves', () => {
  test('a credit cut off after the API acted is sent again with the same key: credited once; balances above 2^31', async () => {
    const { tokens, client } = await newPlayer();
    const server = client.server(serverKey);
    const credit = () =>
      server.call('post', '/players/{playerId}/currencies/{currencyKey}/credit', {
        params: { path: { playerId: tokens.player.id, currencyKey: 'gold' } },
        body: { amount: 1_000_000_000, reason: 'sdk-test' },
      });
    proxy.fail({ kind: 'cut-after-forward' });
    const movement = await credit();
    const credits = proxy.seen.filter((s) => s.path.endsWith('/credit'));
    expect(credits.map((s) => s.status)).toEqual([0, 200]);
    const keys = credits.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(movement.replayed).toBe(true);
    expect(movement.balanceAfter).toBe(1_000_000_000);

    // Each next call is a new move: a new key, credited again.
    await credit();
    expect((await credit()).balanceAfter).toBe(3_000_000_000);
    expect(new Set(proxy.seen.map((s) => s.headers['idempotency-key'])).size).toBe(3);
    const balances = await client
      .player(tokens)
      .call('get', '/players/{playerId}/inventories/{inventory}/balances', { params: { path: { playerId: 'me', inventory: 'account' } } });
    expect(balances.items).toEqual([expect.objectContaining({ currencyKey: 'gold', amount: 3_000_000_000 })]);
  });

  test('503 and 429 are retried (429 after its Retry-After); a 503 on a move without a key is not', async () => {
    const { tokens, client } = await newPlayer();
    const player = client.player(tokens);
    proxy.fail({ kind: 'status', status: 503 }, { kind: 'status', status: 429, retryAfter: 1 });
    const started = Date.now();
    await player.call('get', '/players/{playerId}', { params: { path: { playerId: 'me' } } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(proxy.seen.map((s) => s.status)).toEqual([503, 429, 200]);

    // Making a session takes no Idempotency-Key: a 503 may have made it, so it is the answer.
    proxy.seen.length = 0;
    proxy.fail({ kind: 'status', status: 503 });
    const made = await player.attempt('post', '/sessions', { body: { gameMode: 'duel', map: 'harbour' } });
    expect(made.ok).toBe(false);
    if (!made.ok) expect([made.refusal.status, made.refusal.code]).toEqual([503, 'unavailable']);
    expect(proxy.seen).toHaveLength(1);

    // A Retry-After longer than the SDK waits is answered at once.
    proxy.seen.length = 0;
    proxy.fail({ kind: 'status', status: 429, retryAfter: 60 });
    const limited = await player.attempt('get', '/players/{playerId}', { params: { path: { playerId: 'me' } } });
    expect(!limited.ok && limited.refusal.code).toBe('rate-limited');
    expect(proxy.seen).toHaveLength(1);
  });

  test('refusals are typed: code, message, details; attempt answers them, call throws them', async () => {
    const { tokens, client } = await newPlayer();
    const server = client.server(serverKey);
    const debit = await server.attempt('post', '/players/{playerId}/currencies/{currencyKey}/debit', {
      params: { path: { playerId: tokens.player.id, currencyKey: 'gold' } },
      body: { amount: 5, reason: 'sdk-test' },
    });
    if (debit.ok) throw new Error('a debit of an empty balance went through');
    // `code` is the union of this operation's codes: comparing it with one it cannot answer would not compile.
    const code: 'insufficient-balance' | 'allowance-exceeded' | typeof debit.refusal.code = debit.refusal.code;
    expect([debit.refusal.status, code]).toEqual([409, 'insufficient-balance']);
    expect(debit.refusal.details).toEqual(expect.objectContaining({ currencyKey: 'gold', held: 0, requested: 5 }));

    const missing = await server.call('get', '/players/{playerId}', { params: { path: { playerId: 'no-such-player' } } }).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(HearthRefusal);
    expect((missing as HearthRefusal).is('not-found')).toBe(true);
    expect((missing as HearthRefusal).requestId).toMatch(/.+/);

    const bad = await server.attempt('post', '/auth/server', { body: { subject: '' } });
    expect(!bad.ok && [bad.refusal.status, bad.refusal.code, bad.refusal.details?.field]).toEqual([400, 'invalid-request', 'body.subject']);
  });
});

describe('reads', () => {
  test('conditional reads: the ETag goes back, a 304 answers the kept body', async () => {
    const { tokens, client } = await newPlayer();
    const player = client.player(tokens);
    const first = await player.call('get', '/flags');
    const second = await player.call('get', '/flags');
    expect(second).toEqual(first);
    expect(first.items.map((f) => f.name).sort()).toEqual(['beta', 'new_shop']);
    const flags = proxy.seen.filter((s) => s.path === '/v1/flags');
    expect(flags.map((s) => [s.status, s.headers['if-none-match'] !== undefined])).toEqual([
      [200, false],
      [304, true],
    ]);
  });

  test('a Web Storage store keeps the ETag across clients (a page reload)', async () => {
    const storage = new Map<string, string>();
    const webStorage = { getItem: (k: string) => storage.get(k) ?? null, setItem: (k: string, v: string) => void storage.set(k, v) };
    const { tokens } = await newPlayer();
    await hearth({ etagStore: new WebStorageEtagStore(webStorage) })
      .player(tokens)
      .call('get', '/flags');
    expect([...storage.keys()]).toEqual([expect.stringMatching(/^hearth:etag:player:.+ http:.+\/v1\/flags$/)]);
    proxy.seen.length = 0;
    const reloaded = await hearth({ etagStore: new WebStorageEtagStore(webStorage) })
      .player(tokens)
      .call('get', '/flags');
    expect(reloaded.items).toHaveLength(2);
    expect(proxy.seen.map((s) => s.status)).toEqual([304]);
  });

  test('pages: every item, page after page', async () => {
    const { tokens, client } = await newPlayer();
    const server = client.server(serverKey);
    for (let i = 1; i <= 5; i++) {
      await server.call('post', '/players/{playerId}/currencies/{currencyKey}/credit', {
        params: { path: { playerId: tokens.player.id, currencyKey: 'gold' } },
        body: { amount: i, reason: 'sdk-test' },
      });
    }
    proxy.seen.length = 0;
    const amounts: number[] = [];
    for await (const entry of client.player(tokens).items('/players/{playerId}/ledger', { params: { path: { playerId: 'me' }, query: { limit: 2 } } }))
      amounts.push(entry.amount);
    expect(amounts).toEqual([5, 4, 3, 2, 1]);
    expect(proxy.seen.map((s) => new URL(s.path, 'http://x').searchParams.has('cursor'))).toEqual([false, true, true]);
  });
});

describe('the sessions socket', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  test('subscribe, hear changes; after its process is killed the socket reconnects and follows again', async () => {
    const a = await startRealtimeProcess(h, children, 15_000);
    const b = await startRealtimeProcess(h, children, 15_000);
    let live = a.url;
    const { tokens, client } = await newPlayer(hearth({ WebSocket: WebSocket as unknown as WebSocketConstructor }));
    const host = client.player((await newPlayer()).tokens);
    const watcher = client.player(tokens);

    const socket = await watcher.socket({ locate: async () => live });
    const heard: PlatformSession[] = [];
    const states: string[] = [];
    socket.on('session', (s) => heard.push(s));
    socket.on('state', (s) => states.push(s));
    const lobby = await host.call('post', '/sessions', { body: { gameMode: 'duel', map: 'harbour' } });
    expect((await socket.subscribe(lobby.id)).id).toBe(lobby.id);

    const guest = client.player((await newPlayer()).tokens);
    await guest.call('post', '/sessions/{sessionId}/join', { params: { path: { sessionId: lobby.id } }, body: {} });
    await eventually(async () => heard.some((s) => s.id === lobby.id && s.players.length === 2), 10_000);

    // Killed mid-session: the SDK re-reads where to connect, authorizes and subscribes again.
    live = b.url;
    a.child.kill('SIGKILL');
    await eventually(async () => states.includes('reconnecting') && socket.state === 'open', 15_000);
    await guest.call('post', '/sessions/{sessionId}/ready', { params: { path: { sessionId: lobby.id } }, body: { isReady: true } });
    await eventually(async () => heard.some((s) => s.id === lobby.id && s.players.some((p) => p.isReady)), 10_000);
    expect(states).toEqual(['reconnecting', 'open']);
    expect([...socket.subscriptions]).toEqual([lobby.id]);

    // A refused subscription is a typed refusal.
    await expect(socket.subscribe('no-such-session')).rejects.toMatchObject({ code: 'not-found' });
    socket.close();
    expect(socket.state).toBe('closed');
  });
});
