/**
 * The load profiles: how hard and how long each scenario runs. Plain data, read both by the k6 script
 * (loadtest/k6/hearth.ts builds its `scenarios` from it) and by the runner (loadtest/run.ts, for the
 * summary's req/s and the log), so the two cannot disagree.
 *
 * Throughput scenarios run at a fixed arrival rate (k6's constant-arrival-rate: a late answer does not
 * slow the next request down, so latency is measured without coordinated omission), all at once, as
 * a game's traffic arrives. The lobby scenario runs its VUs in a loop; the rate-limit scenario is one
 * iteration that waits for the clock (docs/performance.md, "Load tests (k6)").
 */
export interface RateScenario {
  /** requests (iterations) a second */
  rate: number;
  /**
   * VUs k6 starts with and may grow to (an iteration waiting on a slow answer holds one). Starting
   * with enough keeps k6 from initializing VUs mid-run, which drops iterations while it does.
   */
  vus: number;
  maxVUs: number;
}

export interface Profile {
  /** how long each throughput scenario and the lobby loop run, in seconds */
  seconds: number;
  auth: RateScenario;
  playersMe: RateScenario;
  flags304: RateScenario;
  saves: RateScenario;
  credit: RateScenario;
  cardPurchase: RateScenario;
  /** iterations a second, each two increments: the environment's counter and a player's */
  stats: RateScenario;
  /** GET /commerce/catalog with a player's token */
  catalog: RateScenario;
  /** GET /commerce/grants/changes with the server key, each VU following its own `next` */
  grantsFeed: RateScenario;
  /** iterations a second, each a whole purchase: POST /commerce/orders, then the authorization that completes it (the stand-in store approves at once) */
  orders: RateScenario;
  /** VUs each running lobby lifecycles with two players and their two sockets open */
  lobbyVUs: number;
  /**
   * Lobby lifecycles per pair of sockets (each VU iteration opens two sockets, then runs this many
   * lobbies). Upgrades count against the per-address limit (600 a minute, docs/realtime.md) and every
   * socket here comes from 127.0.0.1: enough lobbies per socket keep the opens well under it.
   */
  lobbiesPerSocket: number;
  /** players the reads and writes are spread over (signed in by setup) */
  players: number;
}

export const PROFILES: Record<'smoke' | 'full', Profile> = {
  // CI: every path under light, steady load; the whole `make loadtest` stays well under 2 minutes.
  smoke: {
    seconds: 20,
    auth: { rate: 5, vus: 5, maxVUs: 10 },
    playersMe: { rate: 50, vus: 10, maxVUs: 20 },
    flags304: { rate: 50, vus: 10, maxVUs: 20 },
    saves: { rate: 20, vus: 10, maxVUs: 20 },
    credit: { rate: 10, vus: 10, maxVUs: 20 },
    cardPurchase: { rate: 10, vus: 10, maxVUs: 20 },
    stats: { rate: 10, vus: 10, maxVUs: 20 },
    catalog: { rate: 20, vus: 5, maxVUs: 20 },
    grantsFeed: { rate: 10, vus: 5, maxVUs: 20 },
    orders: { rate: 2, vus: 5, maxVUs: 10 },
    lobbyVUs: 1,
    lobbiesPerSocket: 10,
    players: 20,
  },
  // Release runs: 5 minutes at a sustained mix (about 500 requests a second plus the lobbies) that one
  // API process serves here beside k6, PostgreSQL and Redis on two shared cores.
  full: {
    seconds: 300,
    auth: { rate: 10, vus: 10, maxVUs: 50 },
    playersMe: { rate: 200, vus: 30, maxVUs: 100 },
    flags304: { rate: 200, vus: 30, maxVUs: 100 },
    saves: { rate: 50, vus: 30, maxVUs: 100 },
    credit: { rate: 25, vus: 30, maxVUs: 100 },
    cardPurchase: { rate: 25, vus: 30, maxVUs: 100 },
    stats: { rate: 50, vus: 30, maxVUs: 100 },
    catalog: { rate: 100, vus: 20, maxVUs: 100 },
    grantsFeed: { rate: 20, vus: 10, maxVUs: 50 },
    orders: { rate: 5, vus: 10, maxVUs: 50 },
    lobbyVUs: 2,
    lobbiesPerSocket: 25,
    players: 100,
  },
};

export type ProfileName = keyof typeof PROFILES;

/**
 * The endpoints (request tags) each scenario times, in the summary's order: the k6 script sets a
 * threshold per endpoint from it, the runner prints its table from it.
 */
export const SCENARIO_ENDPOINTS: Record<string, string[]> = {
  auth: ['auth-server', 'auth-refresh'],
  players_me: ['players-me'],
  flags_304: ['flags-304'],
  saves: ['saves-put'],
  credit: ['currency-credit', 'currency-credit-replay'],
  card_purchase: ['card-purchase', 'card-purchase-replay'],
  stats: ['stat-increment', 'stat-increment-player'],
  catalog: ['commerce-catalog'],
  grants_feed: ['commerce-grant-changes'],
  orders: ['commerce-order', 'commerce-authorize'],
  lobby: ['realtime-info', 'sessions-create', 'sessions-join', 'sessions-ready', 'sessions-status', 'sessions-leave', 'sessions-get'],
  rate_limit: ['rate-limited-players-me'],
};
