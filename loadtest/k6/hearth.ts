/**
 * Hearth's hot paths under k6 (run by `make loadtest`: loadtest/run.ts starts Hearth and runs this).
 *
 * Scenarios, all at once (docs/performance.md, "Load tests (k6)"):
 * - `auth`: POST /auth/server (a server signs a player in) then POST /auth/refresh with the refresh token;
 * - `players_me`: GET /players/me with a player's token;
 * - `flags_304`: GET /flags with If-None-Match = the current ETag, answered 304;
 * - `saves`: PUT /players/me/data/:key, 1 KB with expectedVersion = the version the last write answered;
 * - `credit`: POST /players/:id/currencies/gold/credit with a new Idempotency-Key, and every tenth a
 *   retry with the same key that must answer the first receipt (`replayed: true`);
 * - `catalog`: GET /commerce/catalog with a player's token (the products from cache, the player's part read);
 * - `grants_feed`: GET /commerce/grants/changes with the server key, each VU following the `next` it got;
 * - `orders`: a purchase through the stand-in store the runner starts (it approves every order at once):
 *   POST /commerce/orders, then POST /commerce/store/authorizations, which finalizes and grants once;
 * - `lobby`: a lobby's whole lifecycle with both players' sockets open receiving every frame (lobby.ts);
 * - `rate_limit`: the limits hold exactly (rate-limit.ts).
 *
 * Every answer is checked (status and shape); the thresholds fail the run on any failed check, any
 * unexpected status, a missing socket frame, or p95/p99 latency past its bound per endpoint tag.
 */
import { Options } from 'k6/options';
import exec from 'k6/execution';
import { PROFILES, ProfileName, RateScenario, SCENARIO_ENDPOINTS } from './profiles.ts';
import { Player, SERVER_KEY, call, checkTagged, clientAddress, hasRateLimitHeaders, json, signInOrThrow } from './api.ts';
import { lobby as lobbyLifecycle } from './lobby.ts';
import { rateLimit as rateLimitBurst } from './rate-limit.ts';

declare const __ENV: Record<string, string | undefined>;

const PROFILE_NAME = (__ENV.HEARTH_LOAD_PROFILE ?? 'smoke') as ProfileName;
const profile = PROFILES[PROFILE_NAME];
if (!profile) throw new Error(`HEARTH_LOAD_PROFILE must be one of ${Object.keys(PROFILES).join(', ')}`);

type Bounds = [number, number, number];

/**
 * Latency bounds per endpoint tag, in ms: [p50, p95, p99], from smoke runs on the shared 2-core
 * development machine with other engineers' suites running beside it (docs/performance.md, "Load
 * tests (k6)", has the figures).
 * - The p50 bound is 3-5 times the p50 measured and below ten times it: a path ten times slower than
 *   today fails, whatever the machine's noise does to the tail.
 * - The p95/p99 bounds catch queues and stalls. On that machine the other suites' database work stalls
 *   commits now and then for up to about a second (seen in the API's own access log, on write routes
 *   only), which in a 20 s run moves a write's p95 to 300-400 ms; the bounds sit above that and far
 *   below what a path that queues or times out gives.
 */
const READ: Bounds = [10, 60, 200]; // answered from caches: p50 1.3-2.4, p95 8-20, p99 24-72 measured
const LIGHT: Bounds = [20, 150, 500]; // one small read or an idempotent replay: p50 2-7, p95 9-29, p99 12-228
const WRITE: Bounds = [40, 600, 1500]; // a transaction: p50 6-14, p95 17-367, p99 24-764
const SIGN_IN: Bounds = [75, 600, 1500]; // token signing and a player upsert: p50 12-24, p95 27-372, p99 38-813
export const LATENCY_BOUNDS: Record<string, Bounds> = {
  'auth-server': SIGN_IN,
  'auth-refresh': SIGN_IN,
  'players-me': READ,
  'flags-304': READ,
  'saves-put': WRITE,
  'currency-credit': WRITE,
  'currency-credit-replay': LIGHT,
  'card-purchase': WRITE,
  'card-purchase-replay': LIGHT,
  'stat-increment': WRITE,
  'stat-increment-player': WRITE,
  'commerce-catalog': READ, // the products and the player's part from memory
  'commerce-grant-changes': LIGHT, // one index scan
  'commerce-order': WRITE, // the order row, then InitTxn at the stand-in store
  'commerce-authorize': WRITE, // QueryTxn, the claim, FinalizeTxn, the completion's transaction
  'realtime-info': READ,
  'sessions-create': WRITE,
  'sessions-join': WRITE,
  'sessions-ready': WRITE,
  'sessions-status': WRITE,
  'sessions-leave': WRITE,
  'sessions-get': LIGHT,
  'rate-limited-players-me': LIGHT,
};
/** HTTP change → the socket's frame (session_frame_ms), [p50, p95, p99] ms: p50 7-10, p95 19-35, p99 29-169 measured. */
export const FRAME_BOUNDS: Bounds = [40, 200, 600];

const latency = ([p50, p95, p99]: Bounds) => [`med<${p50}`, `p(95)<${p95}`, `p(99)<${p99}`];

function thresholds(): Options['thresholds'] {
  const out: Record<string, string[]> = {
    // Every check of every answer and frame passes: one wrong status, header or frame fails the run.
    checks: ['rate==1'],
    // No answer outside the statuses its request expects (200-204, 304 for flags, 429 in the burst).
    http_req_failed: ['rate==0'],
    session_frames_missing: ['count==0'],
    session_frame_ms: latency(FRAME_BOUNDS),
    // The lobby scenario's sockets opened.
    ws_sessions: ['count>0'],
  };
  for (const [scenario, endpoints] of Object.entries(SCENARIO_ENDPOINTS)) {
    // Each scenario did its work (a scenario that made no request passes nothing vacuously).
    out[`http_reqs{scenario:${scenario}}`] = ['count>0'];
    out[`checks{scenario:${scenario}}`] = ['rate==1'];
    for (const endpoint of endpoints) {
      out[`http_req_failed{endpoint:${endpoint}}`] = ['rate==0'];
      out[`http_reqs{endpoint:${endpoint}}`] = ['count>0'];
      out[`http_req_duration{endpoint:${endpoint}}`] = latency(LATENCY_BOUNDS[endpoint]);
    }
  }
  return out;
}

function rateScenario(fn: string, s: RateScenario) {
  return {
    executor: 'constant-arrival-rate' as const,
    exec: fn,
    rate: s.rate,
    timeUnit: '1s',
    duration: `${profile.seconds}s`,
    preAllocatedVUs: s.vus,
    maxVUs: s.maxVUs,
  };
}

export const options: Options = {
  scenarios: {
    auth: rateScenario('auth', profile.auth),
    players_me: rateScenario('playersMe', profile.playersMe),
    flags_304: rateScenario('flags304', profile.flags304),
    saves: rateScenario('saves', profile.saves),
    credit: rateScenario('credit', profile.credit),
    card_purchase: rateScenario('cardPurchase', profile.cardPurchase),
    stats: rateScenario('stats', profile.stats),
    catalog: rateScenario('catalog', profile.catalog),
    grants_feed: rateScenario('grantsFeed', profile.grantsFeed),
    orders: rateScenario('orders', profile.orders),
    lobby: { executor: 'constant-vus', exec: 'lobby', vus: profile.lobbyVUs, duration: `${profile.seconds}s`, gracefulStop: '30s' },
    // One iteration: it may wait up to 10 s for a fresh clock minute, then for that minute to end.
    rate_limit: { executor: 'per-vu-iterations', exec: 'rateLimit', vus: 1, iterations: 1, maxDuration: '150s' },
  },
  thresholds: thresholds(),
  summaryTrendStats: ['min', 'med', 'p(95)', 'p(99)', 'max', 'count'],
  // The session ids and player ids in paths must not become metric names: requests are named by route.
  systemTags: ['scenario', 'status', 'method', 'name', 'group', 'check', 'error', 'error_code', 'expected_response'],
  setupTimeout: '120s',
};

interface SetupData {
  players: Player[];
  flagsEtag: string;
}

/** The stand-in store's tickets, one per player in order (loadtest/run.ts issues them): each player proves a store account in setup. */
const STORE_TICKETS: string[] = JSON.parse(__ENV.HEARTH_STORE_TICKETS ?? '[]');
const STORE_IDENTITY = 'hearth-load';

/** Signs the read/write players in and reads the flags' ETag; any refusal throws, failing the run. */
export function setup(): SetupData {
  const players: Player[] = [];
  for (let i = 0; i < profile.players; i++) players.push(signInOrThrow(SERVER_KEY, `load-player-${i}`));
  const flags = call('setup', 'GET', 'GET /flags', '/flags', { token: players[0].accessToken });
  const flagsEtag = flags.headers['Etag'];
  if (flags.status !== 200 || !flagsEtag) throw new Error(`GET /flags answered ${flags.status} without an ETag: ${flags.body}`);
  // Every player's balance exists before the credits are timed (as for a player who has played), with
  // gold for every card the purchase scenario buys (1 each).
  for (const [i, p] of players.entries()) {
    const res = call('setup', 'POST', 'POST /players/:playerId/currencies/:currencyKey/credit', `/players/${p.id}/currencies/gold/credit`, {
      token: SERVER_KEY,
      headers: { 'Idempotency-Key': `setup-${i}` },
      body: { amount: 1_000_000, reason: 'loadtest' },
    });
    if (res.status !== 200) throw new Error(`the first credit of ${p.id} answered ${res.status}: ${res.body}`);
    // The player's store account, for the orders scenario (identify asks the stand-in store).
    const identified = call('setup', 'POST', 'POST /commerce/store/identify', '/commerce/store/identify', {
      token: p.accessToken,
      body: { ticket: STORE_TICKETS[i], identity: STORE_IDENTITY },
    });
    if (identified.status !== 200) throw new Error(`identify of ${p.id} answered ${identified.status}: ${identified.body}`);
  }
  return { players, flagsEtag };
}

const pick = (data: SetupData, n: number): Player => data.players[n % data.players.length];

export function auth(): void {
  // Subjects repeat, so most sign-ins find their player (200) and a few make one (201); each subject
  // is a player on a device of its own address.
  const n = exec.scenario.iterationInTest % 200;
  const subject = `auth-${n}`;
  const from = clientAddress(n + 1);
  const signIn = call('auth-server', 'POST', 'POST /auth/server', '/auth/server', { token: SERVER_KEY, body: { subject }, from });
  const tokens = json(signIn);
  const signedIn = checkTagged('auth-server', signIn, {
    'POST /auth/server is 200 or 201 with tokens': (r) =>
      (r.status === 200 || r.status === 201) && typeof tokens?.accessToken === 'string' && typeof tokens?.refreshToken === 'string',
  });
  if (!signedIn) return;
  const refresh = call('auth-refresh', 'POST', 'POST /auth/refresh', '/auth/refresh', { body: { refreshToken: tokens.refreshToken }, from });
  const renewed = json(refresh);
  checkTagged('auth-refresh', refresh, {
    'POST /auth/refresh is 200 with new tokens of the same player': (r) =>
      r.status === 200 && renewed?.player?.id === tokens.player.id && typeof renewed?.accessToken === 'string' && renewed.refreshToken !== tokens.refreshToken,
    'POST /auth/refresh carries the X-RateLimit headers': hasRateLimitHeaders,
  });
}

export function playersMe(data: SetupData): void {
  const player = pick(data, exec.scenario.iterationInTest);
  const res = call('players-me', 'GET', 'GET /players/me', '/players/me', { token: player.accessToken });
  checkTagged('players-me', res, {
    'GET /players/me is 200 with the player': (r) => r.status === 200 && json(r)?.id === player.id,
    'GET /players/me carries the X-RateLimit headers': hasRateLimitHeaders,
  });
}

export function flags304(data: SetupData): void {
  const player = pick(data, exec.scenario.iterationInTest);
  const res = call('flags-304', 'GET', 'GET /flags', '/flags', { token: player.accessToken, headers: { 'If-None-Match': data.flagsEtag }, expect: [304] });
  checkTagged('flags-304', res, {
    'GET /flags with the current ETag is 304 without a body': (r) => r.status === 304 && (r.body === null || r.body === ''),
    'GET /flags 304 carries the X-RateLimit headers': hasRateLimitHeaders,
  });
}

/** This VU's slot version: what its last write answered (each VU writes a slot of its own). */
let slotVersion = 0;
const SAVE_VALUE = { blob: 'x'.repeat(1000) };

export function saves(data: SetupData): void {
  const vu = exec.vu.idInTest;
  const player = pick(data, vu);
  const res = call('saves-put', 'PUT', 'PUT /players/me/data/:key', `/players/me/data/slot-${vu}`, {
    token: player.accessToken,
    body: { data: SAVE_VALUE, expectedVersion: slotVersion },
  });
  const entry = json(res);
  const ok = checkTagged('saves-put', res, {
    'PUT /players/me/data/:key with expectedVersion is 201 (made) or 200 (replaced) at version + 1': (r) =>
      r.status === (slotVersion === 0 ? 201 : 200) && entry?.version === slotVersion + 1,
  });
  if (ok) slotVersion = entry.version;
}

export function credit(data: SetupData): void {
  const n = exec.scenario.iterationInTest;
  const player = pick(data, n);
  const key = `load-${exec.vu.idInTest}-${exec.vu.iterationInScenario}`;
  const request = {
    token: SERVER_KEY,
    headers: { 'Idempotency-Key': key },
    body: { amount: 1, reason: 'loadtest' },
  };
  const route = 'POST /players/:playerId/currencies/:currencyKey/credit';
  const path = `/players/${player.id}/currencies/gold/credit`;
  const res = call('currency-credit', 'POST', route, path, request);
  const movement = json(res);
  const moved = checkTagged('currency-credit', res, {
    'credit with a new Idempotency-Key is 200, amount 1, not replayed': (r) => r.status === 200 && movement?.amount === 1 && movement?.replayed === false,
  });
  if (!moved || n % 10 !== 0) return;
  const retry = call('currency-credit-replay', 'POST', route, path, request);
  const replay = json(retry);
  checkTagged('currency-credit-replay', retry, {
    'a retry with the same key answers the first receipt, replayed': (r) =>
      r.status === 200 && replay?.replayed === true && replay?.transactionId === movement.transactionId && replay?.balanceAfter === movement.balanceAfter,
  });
}

/** A player buys a card into their stack with their own token; one in ten is retried under its key. */
export function cardPurchase(data: SetupData): void {
  const n = exec.scenario.iterationInTest;
  const player = pick(data, n);
  const request = {
    token: player.accessToken,
    headers: { 'Idempotency-Key': `load-card-${exec.vu.idInTest}-${exec.vu.iterationInScenario}` },
    body: { cardTypeKey: 'knight', as: 'stack', realmId: null }, // into the account (a card's default place is the current realm)
  };
  const route = 'POST /players/:playerId/purchases/cards';
  const path = `/players/me/purchases/cards`; // a player token names its player `me`
  const res = call('card-purchase', 'POST', route, path, request);
  const bought = json(res);
  const ok = checkTagged('card-purchase', res, {
    'a card purchase with a new Idempotency-Key is 200, charged 1 gold, not replayed': (r) =>
      r.status === 200 && bought?.replayed === false && bought?.charges?.[0]?.amount === -1 && bought?.granted?.cardTypeKey === 'knight',
  });
  if (!ok || n % 10 !== 0) return;
  const retry = call('card-purchase-replay', 'POST', route, path, request);
  const replay = json(retry);
  checkTagged('card-purchase-replay', retry, {
    'a retry with the same key answers the first purchase, replayed, charging nothing more': (r) =>
      r.status === 200 && replay?.replayed === true && replay?.charges?.[0]?.transactionId === bought.charges[0].transactionId,
  });
}

/**
 * A game server counts: the environment-wide counter every server moves (the hottest row a game has)
 * and the player's own. Each answer is the new value, never below the one the previous increment of
 * this VU saw (other VUs add between them).
 */
let lastMatches = 0n;
export function stats(data: SetupData): void {
  const player = pick(data, exec.scenario.iterationInTest);
  const all = call('stat-increment', 'POST', 'POST /stats/:key/increment', '/stats/matches/increment', { token: SERVER_KEY, body: { by: 1 } });
  const counted = json(all);
  checkTagged('stat-increment', all, {
    'POST /stats/:key/increment is 200 with a value past the one this VU saw last': (r) =>
      r.status === 200 && counted?.key === 'matches' && typeof counted?.value === 'string' && BigInt(counted.value) > lastMatches,
  });
  if (typeof counted?.value === 'string') lastMatches = BigInt(counted.value);
  const own = call('stat-increment-player', 'POST', 'POST /players/:playerId/stats/:key/increment', `/players/${player.id}/stats/wins/increment`, {
    token: SERVER_KEY,
    body: { by: 2 },
  });
  const mine = json(own);
  checkTagged('stat-increment-player', own, {
    "POST /players/:playerId/stats/:key/increment is 200 with the player's even value": (r) =>
      r.status === 200 && mine?.key === 'wins' && BigInt(mine.value) % 2n === 0n,
  });
}

export function catalog(data: SetupData): void {
  const player = pick(data, exec.scenario.iterationInTest);
  const res = call('commerce-catalog', 'GET', 'GET /commerce/catalog', '/commerce/catalog', { token: player.accessToken });
  const body = json(res);
  checkTagged('commerce-catalog', res, {
    'GET /commerce/catalog is 200 with the products in the wallet currency': (r) =>
      r.status === 200 && Array.isArray(body?.products) && body.products.length === 2 && body.products.every((p: any) => p.currency === 'USD'),
    'GET /commerce/catalog carries the X-RateLimit headers': hasRateLimitHeaders,
  });
}

/** This VU's place in the grants feed: the `next` it got last (the feed only grows while orders complete). */
let feedCursor: string | undefined;
export function grantsFeed(): void {
  const path = feedCursor ? `/commerce/grants/changes?cursor=${encodeURIComponent(feedCursor)}` : '/commerce/grants/changes';
  const res = call('commerce-grant-changes', 'GET', 'GET /commerce/grants/changes', path, { token: SERVER_KEY });
  const page = json(res);
  const ok = checkTagged('commerce-grant-changes', res, {
    'GET /commerce/grants/changes is 200 with changes granted and a next cursor': (r) =>
      r.status === 200 &&
      Array.isArray(page?.items) &&
      typeof page?.next === 'string' &&
      page.items.every((c: any) => c.change === 'granted' && c.grant?.key === 'gold-pack'),
  });
  if (ok) feedCursor = page.next;
}

/**
 * A player buys the repeatable gold pack: the order (the stand-in store is asked to start it and
 * approves it at once), then the client's authorization, which finalizes it once and grants once.
 * Consecutive iterations go to consecutive players, so one player has no two orders open at once.
 */
export function orders(data: SetupData): void {
  const player = pick(data, exec.scenario.iterationInTest);
  const made = call('commerce-order', 'POST', 'POST /commerce/orders', '/commerce/orders', {
    token: player.accessToken,
    body: { sku: 'gold-pack', provider: 'steam', language: 'en' },
  });
  const order = json(made);
  const ordered = checkTagged('commerce-order', made, {
    'POST /commerce/orders is 201, awaiting the player, in USD': (r) =>
      r.status === 201 && order?.status === 'awaiting-player' && order?.currency === 'USD' && typeof order?.storeOrderId === 'string',
  });
  if (!ordered) return;
  const settled = call('commerce-authorize', 'POST', 'POST /commerce/store/authorizations', '/commerce/store/authorizations', {
    token: player.accessToken,
    body: { storeOrderId: order.storeOrderId, authorized: true },
  });
  const settlement = json(settled);
  checkTagged('commerce-authorize', settled, {
    'POST /commerce/store/authorizations completes the order with its one entitlement': (r) =>
      r.status === 200 && settlement?.order?.status === 'completed' && settlement?.entitlements?.length === 1 && settlement.entitlements[0].key === 'gold-pack',
  });
}

export async function lobby(): Promise<void> {
  await lobbyLifecycle(profile.lobbiesPerSocket);
}

export function rateLimit(): void {
  rateLimitBurst();
}

/** The whole summary as JSON for the runner, which prints its own table (k6's is not printed). */
export function handleSummary(data: unknown): Record<string, string> {
  const file = __ENV.HEARTH_SUMMARY_FILE;
  if (!file) throw new Error('HEARTH_SUMMARY_FILE is not set');
  return { [file]: JSON.stringify(data) };
}
