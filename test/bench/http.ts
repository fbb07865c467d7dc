/**
 * The HTTP bench: bare koa hello-world, GET /v1/players/me with a player token and GET /v1/flags
 * answered 304, each against a server in a child process of its own, loaded by a loader child.
 * Per target: a warm-up, the peak (as fast as the server answers), then 80% of that peak at a fixed
 * rate, where p50/p99 are read.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createReadStream } from 'node:fs';
import Redis from 'ioredis';
import { MAX_BALANCE } from '@hearth/core/contract';
import { TEST_REDIS_URL } from '../support/env';
import { BENCH_ORIGIN, startChild, keepDatabaseApart, keepRedisOffServerCore, type Child, type CpuSample, type Placement, coreShare } from './child';
import type { PhaseJob, PhaseResult } from './loader';
import {
  BENCH_PRODUCTS,
  BENCH_SKILL_NODES,
  type PgbenchFigures,
  benchNodeKey,
  capturedScript,
  creditScript,
  runPgbench,
  statIncrementScript,
  unlockScript,
} from './pgbench';

export interface HttpBenchOptions {
  warmupSeconds: number;
  durationSeconds: number;
  connections: number;
  /** Share of the peak for the latency phase. */
  loadShare: number;
  /** Folder for `node --cpu-prof` profiles of the server children; none when absent. */
  cpuProfDir?: string;
  /** Target ids to run (all when absent). */
  only?: string[];
  logDir: string;
}

export interface PhaseFigures extends PhaseResult {
  /** Share of a core the server child used. */
  serverCore: number;
  /** Share of a core Redis used (its main thread and the rest). */
  redisCore: number;
  /** Busy share of the whole machine (1 = every core busy). */
  machineBusy: number;
  /** Cores busy with anything else (PostgreSQL, the parent, other work on the machine), in cores. */
  otherCores: number;
  /** Server CPU time per answered request, in µs: steadier than req/s when the machine is shared. */
  serverMicrosPerRequest: number;
  /** Database queries the server made meanwhile (the hot path should make none). */
  databaseQueries: number;
}

/**
 * A read measured in turns with bare koa on the same core, koa before and after each turn of the read:
 * the machine's speed drifts over a run (bare koa alone read 38,000-57,000 req/s back to back), and a
 * share taken from two peaks a minute apart carries that drift. Each turn is compared with the mean of
 * the koa turns around it; the share reported is the median of the turns'.
 */
export interface PairedWithKoa {
  turns: {
    reqPerSec: number;
    microsPerRequest: number;
    koa: { reqPerSec: number; microsPerRequest: number };
    share: number;
    koaSameAnswer?: { reqPerSec: number; microsPerRequest: number };
    shareOfSameAnswer?: number;
  }[];
  /** The median of the turns' shares of koa hello-world: the read's `of koa`. */
  share: number;
  /** The read's answer body, when koa also sent it (the reads answered from kept bytes). */
  answerBytes?: number;
  /** The median of the turns' shares of koa sending the same answer. */
  shareOfSameAnswer?: number;
  turnSeconds: number;
}

export interface TargetResult {
  id: string;
  name: string;
  peak: PhaseFigures;
  /** The reads compared with koa, when koa runs in the same bench: their share from turns beside it. */
  pairedWithKoa?: PairedWithKoa;
  atShare: PhaseFigures & { rate: number };
  /** For the API targets: what the server's own metrics and log say about the run. */
  /** For saves-put and the currency credits: pgbench running the same transaction on the same database with the API's pool size. */
  pgbench?: PgbenchFigures;
  checks?: { rateLimitFailOpen: number; rateLimitRefusals: number; accessLines: number; logFile: string; requestsServed: number };
}

export interface Prepared {
  url: string;
  headers: Record<string, string>;
  expectStatus: number;
  alsoExpect?: number[];
  versionedPut?: PhaseJob['versionedPut'];
  idempotentPost?: PhaseJob['idempotentPost'];
  post?: PhaseJob['post'];
  /** The answer's body as the API sent it (the cached reads): koa sends the same bytes beside it. */
  answer?: string;
  /** Runs after the API's phases, on the same database: the figures the API's are compared with (`connections`: the loader's). */
  compare?: (seconds: number, log: (line: string) => void, connections: number) => Promise<PgbenchFigures>;
}

interface Target {
  id: string;
  name: string;
  /** The targets compared with pgbench run with PostgreSQL on a core of its own (child.ts). */
  placement?: Placement;
  server: 'koa-hello' | 'hearth-api' | 'fastify-cors';
  prepare(ready: any, server: Child): Promise<Prepared>;
}

/** Players the spread credit is spread over (pgbench takes at most 128 scripts: one per player). */
const CREDIT_PLAYERS = 100;

export const TARGETS: Target[] = [
  {
    id: 'koa',
    name: 'bare koa hello-world',
    server: 'koa-hello',
    prepare: async (ready) => {
      await expectStatus(ready.url + '/', {}, 200);
      return { url: ready.url + '/', headers: {}, expectStatus: 200 };
    },
  },
  {
    id: 'players-me',
    name: 'GET /v1/players/me (player token)',
    server: 'hearth-api',
    prepare: async (ready) => {
      const token = await signIn(ready);
      const headers = { Authorization: `Bearer ${token}` };
      const reply = await expectStatus(`${ready.base}/players/me`, headers, 200);
      if (!reply.headers.get('x-ratelimit-limit')) throw new Error('GET /players/me answered without X-RateLimit-* headers: are rate limits on?');
      return { url: `${ready.base}/players/me`, headers, expectStatus: 200 };
    },
  },
  {
    id: 'flags-304',
    name: 'GET /v1/flags answered 304 (player token)',
    server: 'hearth-api',
    prepare: async (ready) => {
      const token = await signIn(ready);
      const auth = { Authorization: `Bearer ${token}` };
      const first = await expectStatus(`${ready.base}/flags`, auth, 200);
      const etag = first.headers.get('etag');
      if (!etag) throw new Error('GET /flags answered no ETag');
      const body = (await first.json()) as { items?: unknown[] };
      if (!Array.isArray(body.items) || body.items.length === 0) throw new Error(`GET /flags answered no flags: ${JSON.stringify(body)}`);
      const headers = { ...auth, 'If-None-Match': etag };
      const again = await expectStatus(`${ready.base}/flags`, headers, 304);
      if (!again.headers.get('x-ratelimit-limit')) throw new Error('GET /flags answered without X-RateLimit-* headers: are rate limits on?');
      return { url: `${ready.base}/flags`, headers, expectStatus: 304 };
    },
  },
  {
    id: 'legal-documents',
    name: 'GET /v1/legal/documents (player token)',
    server: 'hearth-api',
    prepare: async (ready) => cachedRead(ready, '/legal/documents', 2),
  },
  {
    id: 'blog-posts',
    name: 'GET /v1/blog/posts (player token)',
    server: 'hearth-api',
    prepare: async (ready) => cachedRead(ready, '/blog/posts', 12),
  },
  {
    id: 'legal-documents-cors',
    name: 'GET /v1/legal/documents from an allowed Origin (player token)',
    server: 'hearth-api',
    prepare: async (ready) => fromAllowedOrigin(await cachedRead(ready, '/legal/documents', 2, { Origin: BENCH_ORIGIN })),
  },
  {
    id: 'fastify-cors',
    name: 'fastify + @fastify/cors: the same legal documents bytes from an allowed Origin (no credential, limit, ETag or log)',
    server: 'fastify-cors',
    prepare: async (ready) => {
      const headers = { Origin: BENCH_ORIGIN };
      return fromAllowedOrigin({
        url: `${ready.url}/v1/legal/documents`,
        headers,
        expectStatus: 200,
        answer: await (await expectStatus(`${ready.url}/v1/legal/documents`, headers, 200)).text(),
      });
    },
  },
  {
    id: 'commerce-catalog',
    name: `GET /v1/commerce/catalog (player token, ${BENCH_PRODUCTS} products)`,
    server: 'hearth-api',
    prepare: async (ready) => {
      const token = await signIn(ready);
      const headers = { Authorization: `Bearer ${token}` };
      const reply = await expectStatus(`${ready.base}/commerce/catalog`, headers, 200);
      if (!reply.headers.get('x-ratelimit-limit')) throw new Error('GET /commerce/catalog answered without X-RateLimit-* headers: are rate limits on?');
      const body = (await reply.json()) as { products?: unknown[] };
      if (body.products?.length !== BENCH_PRODUCTS)
        throw new Error(`GET /commerce/catalog answered ${body.products?.length ?? 'no'} products, not ${BENCH_PRODUCTS}`);
      return { url: `${ready.base}/commerce/catalog`, headers, expectStatus: 200 };
    },
  },
  {
    id: 'saves-put',
    placement: 'database-apart',
    name: 'PUT /v1/players/me/data/:key, 1 KB with expectedVersion',
    server: 'hearth-api',
    prepare: async (ready) => {
      const token = await signIn(ready);
      const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
      const data = { tag: 'bench', pad: 'x'.repeat(1024 - 24) };
      const size = Buffer.byteLength(JSON.stringify(data));
      if (size !== 1024) throw new Error(`the bench value is ${size} bytes, not 1024`);
      const first = await fetch(`${ready.base}/players/me/data/bench-check`, { method: 'PUT', headers, body: JSON.stringify({ data, expectedVersion: 0 }) });
      if (first.status !== 201) throw new Error(`PUT answered ${first.status}: ${await first.text()}`);
      if (!first.headers.get('x-ratelimit-limit')) throw new Error('PUT answered without X-RateLimit-* headers: are rate limits on?');
      const me = (await (await fetch(`${ready.base}/players/me`, { headers })).json()) as { id: string };
      return {
        url: `${ready.base}/players/me/data/bench`,
        headers,
        expectStatus: 200,
        alsoExpect: [201],
        versionedPut: { body: { data } },
        compare: (seconds, log) =>
          runPgbench({
            databaseUrl: ready.databaseUrl,
            clients: ready.databasePoolSize,
            seconds,
            variables: {
              env: ready.environmentId,
              player: me.id,
              size,
              data: JSON.stringify(data),
              version: 0,
              player_limit: ready.playerSaveLimit,
              environment_limit: ready.environmentSaveLimit,
            },
            protocol: 'prepared',
            log,
          }),
      };
    },
  },
  {
    id: 'currency-credit',
    placement: 'database-apart',
    name: `POST /v1/players/:playerId/currencies/gold/credit with Idempotency-Key, ${CREDIT_PLAYERS} players`,
    server: 'hearth-api',
    prepare: async (ready) => prepareCredit(ready, CREDIT_PLAYERS),
  },
  {
    id: 'currency-credit-hot',
    placement: 'database-apart',
    name: 'POST /v1/players/:playerId/currencies/gold/credit with Idempotency-Key, one player',
    server: 'hearth-api',
    prepare: async (ready) => prepareCredit(ready, 1),
  },
  {
    id: 'item-purchase',
    placement: 'database-apart',
    name: `POST /v1/players/:playerId/purchases/items with Idempotency-Key, ${CREDIT_PLAYERS} players`,
    server: 'hearth-api',
    prepare: async (ready, server) => preparePurchase(ready, server, CREDIT_PLAYERS, ITEM_PURCHASE),
  },
  {
    id: 'card-purchase',
    placement: 'database-apart',
    name: `POST /v1/players/:playerId/purchases/cards with Idempotency-Key, ${CREDIT_PLAYERS} players`,
    server: 'hearth-api',
    prepare: async (ready, server) => preparePurchase(ready, server, CREDIT_PLAYERS, CARD_PURCHASE),
  },
  {
    id: 'skill-node-unlock',
    placement: 'database-apart',
    name: `POST /v1/players/:playerId/skill-nodes/:nodeKey/unlock with Idempotency-Key, ${CREDIT_PLAYERS} players`,
    server: 'hearth-api',
    prepare: async (ready) => prepareUnlock(ready, CREDIT_PLAYERS),
  },
  {
    id: 'stat-increment',
    placement: 'database-apart',
    name: 'POST /v1/stats/:key/increment, every request on one key',
    server: 'hearth-api',
    prepare: async (ready) => prepareStatIncrement(ready),
  },
];

/** What the purchase targets buy: a potion into the account's stack; a card (one new card each, on the account: the bench has no realm). */
const ITEM_PURCHASE = { route: 'purchases/items', body: { itemTypeKey: 'potion' } };
const CARD_PURCHASE = { route: 'purchases/cards', body: { cardTypeKey: 'rune', realmId: null } };

/**
 * Skill-node unlocks with a server key and a new Idempotency-Key each request, each a node the player
 * has not unlocked (every unlock charges its price: 1 gold): the (player, node) pairs of `players`
 * players and the bench's BENCH_SKILL_NODES root nodes, shuffled, each asked once. pgbench runs the
 * same statement (unlockScript): each transaction a random node of its script's player, so a few
 * percent of its transactions find the node unlocked (cheaper: nothing charged).
 */
async function prepareUnlock(ready: any, players: number): Promise<Prepared> {
  const headers = { Authorization: `Bearer ${ready.serverKey}`, 'Content-Type': 'application/json' };
  const made: { id: string }[] = [];
  for (let i = 0; i < players; i++) {
    const id = await signInPlayer(ready, `bench-unlocker-${i}`);
    const credit = await fetch(`${ready.base}/players/${id}/currencies/gold/credit`, {
      method: 'POST',
      headers: { ...headers, 'Idempotency-Key': `fund-unlocker-${i}` },
      body: JSON.stringify({ amount: 1_000_000_000, reason: 'bench' }),
    });
    if (credit.status !== 200) throw new Error(`the credit answered ${credit.status}: ${await credit.text()}`);
    made.push({ id });
  }
  const paths = made.flatMap((p) =>
    Array.from({ length: BENCH_SKILL_NODES }, (_, n) => new URL(`${ready.base}/players/${p.id}/skill-nodes/${benchNodeKey(n)}/unlock`).pathname),
  );
  for (let i = paths.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [paths[i], paths[j]] = [paths[j], paths[i]];
  }
  // One unlock checked before: it charges the price and answers the charge.
  const first = await fetch(`${ready.base}${paths[0].slice(new URL(ready.base).pathname.length)}`, {
    method: 'POST',
    headers: { ...headers, 'Idempotency-Key': 'first-unlock' },
    body: '{}',
  });
  const unlock = (await first.json()) as { alreadyUnlocked?: boolean; charges?: unknown[] };
  if (first.status !== 200 || unlock.alreadyUnlocked !== false || unlock.charges?.length !== 1)
    throw new Error(`the unlock answered ${first.status}: ${JSON.stringify(unlock)}`);
  return {
    url: `${ready.base}/players/${made[0].id}/skill-nodes/${benchNodeKey(0)}/unlock`,
    headers,
    expectStatus: 200,
    idempotentPost: { paths: paths.slice(1), body: '{}' },
    compare: (seconds, log) =>
      runPgbench({
        databaseUrl: ready.databaseUrl,
        clients: ready.databasePoolSize,
        seconds,
        scripts: made.map((p, i) => ({ name: `unlock-${i}`, text: unlockScript(p, BENCH_SKILL_NODES) })),
        protocol: 'prepared',
        variables: { env: ready.environmentId, scope: 'server', fingerprint: 'x'.repeat(43), kind: 'skill-node-unlock', max: MAX_BALANCE },
        log,
      }),
  };
}

/**
 * The environment's counter of one key, increased by 1 from every connection at once (no
 * Idempotency-Key: the plain increment, combined by the service with those of the same counter that
 * arrive while a statement is in flight). The baseline is the database's own ceiling for one hot row:
 * pgbench running one single-row increment per transaction of the same row (statIncrementScript) from
 * as many connections as the loader has (50), not the API's pool size.
 */
async function prepareStatIncrement(ready: any): Promise<Prepared> {
  const headers = { Authorization: `Bearer ${ready.serverKey}`, 'Content-Type': 'application/json' };
  const key = 'bench.matches';
  const url = `${ready.base}/stats/${key}/increment`;
  const body = JSON.stringify({ by: 1 });
  const first = await fetch(url, { method: 'POST', headers, body });
  const stat = (await first.json()) as { key?: string; value?: string };
  if (first.status !== 200 || stat.value !== '1') throw new Error(`the increment answered ${first.status}: ${JSON.stringify(stat)}`);
  return {
    url,
    headers,
    expectStatus: 200,
    post: { body },
    compare: (seconds, log, connections) =>
      runPgbench({
        databaseUrl: ready.databaseUrl,
        clients: connections,
        seconds,
        scripts: [{ name: 'stat-increment', text: statIncrementScript({ key }) }],
        protocol: 'prepared',
        variables: { env: ready.environmentId },
        log,
      }),
  };
}

/**
 * Currency credits with a server key, a new Idempotency-Key each request, round robin over `players`
 * players (one: every request on one balance row). Each player is credited once before (their account
 * inventory and balance exist, as for a player who has played), and pgbench runs the same transaction
 * (creditScript) on the same database, one script per player, chosen at random.
 */
async function prepareCredit(ready: any, players: number): Promise<Prepared> {
  const headers = { Authorization: `Bearer ${ready.serverKey}`, 'Content-Type': 'application/json' };
  const body = JSON.stringify({ amount: 1, reason: 'bench' });
  const made: { id: string; inventoryId: string }[] = [];
  for (let i = 0; i < players; i++) {
    const id = await signInPlayer(ready, `bench-credit-${i}`);
    const path = `${ready.base}/players/${id}/currencies/gold/credit`;
    const first = await fetch(path, { method: 'POST', headers: { ...headers, 'Idempotency-Key': `prepare-${i}` }, body });
    const movement = (await first.json()) as { inventoryId?: string; balanceAfter?: number; replayed?: boolean };
    if (first.status !== 200 || movement.balanceAfter !== 1 || movement.replayed !== false)
      throw new Error(`credit answered ${first.status}: ${JSON.stringify(movement)}`);
    if (!first.headers.get('x-ratelimit-limit')) throw new Error('the credit answered without X-RateLimit-* headers: are rate limits on?');
    made.push({ id, inventoryId: movement.inventoryId! });
  }
  return {
    url: `${ready.base}/players/${made[0].id}/currencies/gold/credit`,
    headers,
    expectStatus: 200,
    idempotentPost: { paths: made.map((p) => new URL(`${ready.base}/players/${p.id}/currencies/gold/credit`).pathname), body },
    compare: (seconds, log) =>
      runPgbench({
        databaseUrl: ready.databaseUrl,
        clients: ready.databasePoolSize,
        seconds,
        // The request the route sends the engine: the path's currency and the body.
        scripts: made.map((p, i) => ({ name: `credit-${i}`, text: creditScript(p, { currencyKey: 'gold', ...JSON.parse(body) }) })),
        protocol: 'prepared',
        // As the pipeline binds them: the server key's scope, a request digest's length.
        variables: { env: ready.environmentId, scope: 'server', fingerprint: 'x'.repeat(43), kind: 'credit', max: MAX_BALANCE },
        log,
      }),
  };
}

/**
 * Purchases (of items, of cards) with a server key, a new Idempotency-Key each request, round robin over `players`
 * players, each holding gold for every purchase the run can make. Each player buys once before (their
 * stack exists, as for a player who has bought before). pgbench runs the same transaction: the
 * statements the server sent for one purchase, captured from its driver (capture on, one purchase,
 * capture off), with that player's ids swapped for each script's player and the key made anew.
 */
async function preparePurchase(ready: any, server: Child, players: number, what: { route: string; body: object }): Promise<Prepared> {
  const headers = { Authorization: `Bearer ${ready.serverKey}`, 'Content-Type': 'application/json' };
  const body = JSON.stringify(what.body);
  const buy = async (id: string, key: string) => {
    const reply = await fetch(`${ready.base}/players/${id}/${what.route}`, { method: 'POST', headers: { ...headers, 'Idempotency-Key': key }, body });
    const purchase = (await reply.json()) as { replayed?: boolean; charges?: { inventoryId: string }[]; granted?: unknown };
    if (reply.status !== 200 || purchase.replayed !== false || purchase.charges?.length !== 1)
      throw new Error(`the purchase answered ${reply.status}: ${JSON.stringify(purchase)}`);
    return purchase.charges[0].inventoryId;
  };
  const made: { id: string; inventoryId: string }[] = [];
  for (let i = 0; i < players; i++) {
    const id = await signInPlayer(ready, `bench-buyer-${i}`);
    const credit = await fetch(`${ready.base}/players/${id}/currencies/gold/credit`, {
      method: 'POST',
      headers: { ...headers, 'Idempotency-Key': `fund-${i}` },
      body: JSON.stringify({ amount: 1_000_000_000, reason: 'bench' }),
    });
    if (credit.status !== 200) throw new Error(`the credit answered ${credit.status}: ${await credit.text()}`);
    made.push({ id, inventoryId: await buy(id, `first-${i}`) });
  }
  server.send({ type: 'capture', on: true });
  await buy(made[0].id, 'captured-purchase');
  server.send({ type: 'capture', on: false });
  const { queries } = await server.next<{ queries: { sql: string; bindings: unknown[] }[] }>('captured');
  return {
    url: `${ready.base}/players/${made[0].id}/${what.route}`,
    headers,
    expectStatus: 200,
    idempotentPost: { paths: made.map((p) => new URL(`${ready.base}/players/${p.id}/${what.route}`).pathname), body },
    compare: (seconds, log) =>
      runPgbench({
        databaseUrl: ready.databaseUrl,
        clients: ready.databasePoolSize,
        seconds,
        // The purchase is the engine's one prepared statement, as the credit's.
        protocol: 'prepared',
        scripts: made.map((p, i) => ({
          name: `purchase-${i}`,
          text: capturedScript(queries, { [made[0].id]: { text: p.id }, [made[0].inventoryId]: { text: p.inventoryId }, 'captured-purchase': 'key' }),
        })),
        variables: {},
        log,
      }),
  };
}

/** A read sent from the bench's allowed page: checked to answer with that origin given back and the exposed headers. */
async function fromAllowedOrigin(prepared: Prepared): Promise<Prepared> {
  const reply = await fetch(prepared.url, { headers: prepared.headers });
  if (reply.headers.get('access-control-allow-origin') !== BENCH_ORIGIN)
    throw new Error(`${prepared.url} gave back no Access-Control-Allow-Origin for ${BENCH_ORIGIN}`);
  if (!reply.headers.get('access-control-expose-headers')?.includes('ETag')) throw new Error(`${prepared.url} exposes no ETag`);
  return prepared;
}

/** A list read from the process's cache: checked to answer 200 with its `items` and rate-limit headers. */
async function cachedRead(ready: { base: string; serverKey: string }, path: string, items: number, extra: Record<string, string> = {}): Promise<Prepared> {
  const token = await signIn(ready);
  const headers = { Authorization: `Bearer ${token}`, ...extra };
  const reply = await expectStatus(`${ready.base}${path}`, headers, 200);
  if (!reply.headers.get('x-ratelimit-limit')) throw new Error(`GET ${path} answered without X-RateLimit-* headers: are rate limits on?`);
  const answer = await reply.text();
  const body = JSON.parse(answer) as { items?: unknown[] };
  if (body.items?.length !== items) throw new Error(`GET ${path} answered ${body.items?.length ?? 'no'} items, not ${items}: ${answer.slice(0, 200)}`);
  return { url: `${ready.base}${path}`, headers, expectStatus: 200, answer };
}

async function expectStatus(url: string, headers: Record<string, string>, status: number): Promise<Response> {
  const reply = await fetch(url, { headers });
  if (reply.status !== status) throw new Error(`GET ${url} answered ${reply.status}, not ${status}: ${await reply.text()}`);
  return reply;
}

async function signIn(ready: { base: string; serverKey: string }, subject = 'bench-player-1'): Promise<string> {
  return (await serverSignIn(ready, subject)).accessToken;
}

async function signInPlayer(ready: { base: string; serverKey: string }, subject: string): Promise<string> {
  return (await serverSignIn(ready, subject)).player.id;
}

async function serverSignIn(ready: { base: string; serverKey: string }, subject: string): Promise<{ accessToken: string; player: { id: string } }> {
  const reply = await fetch(`${ready.base}/auth/server`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ready.serverKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ subject, displayName: 'Bench' }),
  });
  if (reply.status !== 200 && reply.status !== 201) throw new Error(`sign-in failed: ${reply.status} ${await reply.text()}`);
  return (await reply.json()) as { accessToken: string; player: { id: string } };
}

/** CPU of the things besides our children that share the machine: Redis, and every core's busy time. */
async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const read = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return read('used_cpu_user') + read('used_cpu_sys');
}

function machineTicks(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]; // "cpu  user nice system idle iowait irq softirq steal ..."
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + (fields[4] ?? 0);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** The share of the machine's cores busy between two readings of machineTicks (1 = every core). */
function busyShare(from: { busy: number; total: number }, to: { busy: number; total: number }): number {
  return (to.busy - from.busy) / Math.max(1, to.total - from.total);
}

export async function measured(server: Child, loader: Child, redis: Redis, job: PhaseJob): Promise<PhaseFigures> {
  const sample = async (): Promise<CpuSample> => {
    server.send({ type: 'cpu' });
    return server.next('cpu');
  };
  const [s0, r0, m0] = [await sample(), await redisCpuSeconds(redis), machineTicks()];
  const started = performance.now();
  loader.send(job);
  const result = await Promise.race([
    loader.next<PhaseResult>('phase-result', (job.durationSeconds + 60) * 1000),
    loader.next('phase-error', (job.durationSeconds + 60) * 1000).then((e: any) => Promise.reject(new Error(e.message))),
  ]);
  const wallSeconds = (performance.now() - started) / 1000;
  const [s1, r1, m1] = [await sample(), await redisCpuSeconds(redis), machineTicks()];
  const problems = [
    Object.keys(result.unexpected).length > 0 ? `unexpected statuses ${JSON.stringify(result.unexpected)} (expected only ${job.expectStatus})` : '',
    result.errors > 0 ? `${result.errors} connection errors` : '',
    result.timeouts > 0 ? `${result.timeouts} timeouts` : '',
    result.requests === 0 ? 'no answers at all' : '',
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`${job.url}: ${problems.join('; ')}`);
  const serverCore = coreShare(s0, s1);
  const redisCore = (r1 - r0) / wallSeconds;
  const machineBusy = busyShare(m0, m1);
  return {
    ...result,
    serverCore,
    redisCore,
    machineBusy,
    otherCores: Math.max(0, machineBusy * os.availableParallelism() - serverCore - result.loaderCore - redisCore),
    serverMicrosPerRequest: (s1.usage.user - s0.usage.user + s1.usage.system - s0.usage.system) / result.requests,
    databaseQueries: s1.databaseQueries - s0.databaseQueries,
  };
}

/** The server's own account of the run: rate limits checked (never failed open nor refused), requests served. */
async function serverChecks(metricsUrl: string): Promise<{ rateLimitFailOpen: number; rateLimitRefusals: number; requestsServed: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const sum = (metric: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(metric + ' ') || l.startsWith(metric + '{'))
      .reduce((total, l) => total + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return {
    rateLimitFailOpen: sum('hearth_rate_limit_fail_open_total'),
    rateLimitRefusals: sum('hearth_rate_limit_refusals_total'),
    requestsServed: sum('hearth_http_requests_total'),
  };
}

/** How many times `needle` occurs in the file, read in chunks (the logs of a run are large). */
async function countOccurrences(file: string, needle: string): Promise<number> {
  const pattern = Buffer.from(needle);
  let count = 0;
  let carry = Buffer.alloc(0);
  for await (const chunk of createReadStream(file)) {
    const data = Buffer.concat([carry, chunk as Buffer]);
    for (let at = data.indexOf(pattern); at >= 0; at = data.indexOf(pattern, at + pattern.length)) count++;
    carry = data.subarray(Math.max(0, data.length - pattern.length + 1));
  }
  return count;
}

/** A bare koa server kept running for the whole bench, for the turns the reads are measured beside it. */
interface KoaBeside {
  server: Child;
  url: string;
}

/**
 * Turns of each read beside koa, and their length. Single turns move by a fifth with the same code
 * here, and the machine's speed drifts by the second: many short turns, each against the koa turns
 * right around it, give a steadier median than a few long ones.
 */
const PAIRED_TURNS = 9;
const TURN_SECONDS = 2;

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** One server's figures in a turn beside koa (koa's: the mean of the turns before and after). */
interface TurnFigures {
  reqPerSec: number;
  microsPerRequest: number;
}

/** The koa servers a read is measured beside: hello-world, and, when the read says its answer, koa sending those same bytes. */
interface KoaTurn {
  hello: PhaseFigures;
  sameAnswer?: PhaseFigures;
}

const meanOf = (a: PhaseFigures, b: PhaseFigures): TurnFigures => ({
  reqPerSec: (a.reqPerSec + b.reqPerSec) / 2,
  microsPerRequest: (a.serverMicrosPerRequest + b.serverMicrosPerRequest) / 2,
});

/**
 * koa, the read, koa, the read, ... koa: each turn of the read against the koa turns on either side of
 * it. When the read's answer is known (`answer`), each koa turn also measures koa sending exactly those
 * bytes as JSON: what any server pays to send that answer, apart from what the API adds to it.
 */
async function pairWithKoa(
  koa: KoaBeside,
  server: Child,
  loader: Child,
  redis: Redis,
  job: (seconds: number) => PhaseJob,
  seconds: number,
  warmupSeconds: number,
  answer: string | undefined,
): Promise<PairedWithKoa> {
  const koaJob = (url: string, durationSeconds: number): PhaseJob => ({
    type: 'phase',
    url,
    headers: {},
    connections: job(seconds).connections,
    durationSeconds,
    expectStatus: 200,
  });
  let sameAnswerUrl: string | undefined;
  if (answer !== undefined) {
    koa.server.send({ type: 'answer', path: '/same-answer', body: answer });
    await koa.server.next('answer-kept');
    sameAnswerUrl = koa.url + 'same-answer';
  }
  const koaTurn = async (durationSeconds: number): Promise<KoaTurn> => ({
    hello: await measured(koa.server, loader, redis, koaJob(koa.url, durationSeconds)),
    sameAnswer: sameAnswerUrl ? await measured(koa.server, loader, redis, koaJob(sameAnswerUrl, durationSeconds)) : undefined,
  });
  // koa warmed as the read was (a first turn on a cold koa read it 25% slow), and its caches refilled after the read's turns.
  await koaTurn(warmupSeconds);
  let before = await koaTurn(seconds);
  const turns: PairedWithKoa['turns'] = [];
  for (let i = 0; i < PAIRED_TURNS; i++) {
    const read = await measured(server, loader, redis, job(seconds));
    const after = await koaTurn(seconds);
    const hello = meanOf(before.hello, after.hello);
    const same = before.sameAnswer && after.sameAnswer ? meanOf(before.sameAnswer, after.sameAnswer) : undefined;
    turns.push({
      reqPerSec: read.reqPerSec,
      microsPerRequest: read.serverMicrosPerRequest,
      koa: hello,
      share: read.reqPerSec / hello.reqPerSec,
      koaSameAnswer: same,
      shareOfSameAnswer: same ? read.reqPerSec / same.reqPerSec : undefined,
    });
    before = after;
  }
  const ofSame = turns.map((t) => t.shareOfSameAnswer).filter((x): x is number => x !== undefined);
  return {
    turns,
    share: median(turns.map((t) => t.share)),
    answerBytes: answer === undefined ? undefined : Buffer.byteLength(answer),
    shareOfSameAnswer: ofSame.length === turns.length ? median(ofSame) : undefined,
    turnSeconds: seconds,
  };
}

/** The loader's job for a prepared target: `overallRate` requests a second, or as fast as answered. */
export function phaseJob(prepared: Prepared, connections: number, durationSeconds: number, overallRate?: number): PhaseJob {
  return {
    type: 'phase',
    url: prepared.url,
    headers: prepared.headers,
    connections,
    durationSeconds,
    overallRate,
    expectStatus: prepared.expectStatus,
    alsoExpect: prepared.alsoExpect,
    versionedPut: prepared.versionedPut,
    idempotentPost: prepared.idempotentPost,
    post: prepared.post,
  };
}

export async function runTarget(target: Target, options: HttpBenchOptions, log: (line: string) => void, koa?: KoaBeside): Promise<TargetResult> {
  const logFile = path.join(options.logDir, `${target.id}.log`);
  const placement = target.placement ?? 'split';
  const server = startChild(`servers/${target.server}.ts`, {
    role: 'server',
    placement,
    stdout: logFile,
    // One folder per target: node writes a profile per thread (tsx's loader thread too), the largest is the server's.
    nodeArgs: [
      ...(options.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', path.join(options.cpuProfDir, target.id)] : []),
      // For experiments with V8 flags on the servers (e.g. --max-semi-space-size=32); none by default.
      ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ],
  });
  const loader = startChild('loader.ts', { role: 'loader', placement, stdout: 'inherit' });
  const redis = new Redis(TEST_REDIS_URL);
  let putBack = () => undefined as void;
  try {
    const ready = await server.next('ready');
    await loader.next('ready');
    if (placement === 'database-apart') putBack = await keepDatabaseApart(ready.databaseUrl, redis, log);
    else if (target.server === 'hearth-api') putBack = await keepRedisOffServerCore(redis, log);
    const prepared = await target.prepare(ready, server);
    const job = (durationSeconds: number, overallRate?: number) => phaseJob(prepared, options.connections, durationSeconds, overallRate);

    log(`  ${target.name}: warm-up ${options.warmupSeconds} s`);
    await measured(server, loader, redis, job(options.warmupSeconds));
    log(`  ${target.name}: peak, ${options.durationSeconds} s with ${options.connections} connections`);
    const peak = await measured(server, loader, redis, job(options.durationSeconds));
    let pairedWithKoa: PairedWithKoa | undefined;
    if (koa) {
      const seconds = TURN_SECONDS;
      log(`  ${target.name}: ${PAIRED_TURNS} turns of ${seconds} s beside bare koa (koa warmed ${options.warmupSeconds} s, then before and after each)`);
      pairedWithKoa = await pairWithKoa(koa, server, loader, redis, job, seconds, options.warmupSeconds, prepared.answer);
      log(
        `  ${target.name}: ${pairedWithKoa.turns.map((t) => `${Math.round(t.share * 100)}%`).join(', ')} of koa; median ${Math.round(pairedWithKoa.share * 100)}%` +
          (pairedWithKoa.shareOfSameAnswer === undefined
            ? ''
            : `; ${Math.round(pairedWithKoa.shareOfSameAnswer * 100)}% of koa sending the same ${pairedWithKoa.answerBytes} bytes`),
      );
    }
    const rate = Math.round(peak.reqPerSec * options.loadShare);
    log(`  ${target.name}: ${Math.round(peak.reqPerSec)} req/s at peak; now ${rate} req/s (${options.loadShare * 100}%) for ${options.durationSeconds} s`);
    const atShare = await measured(server, loader, redis, job(options.durationSeconds, rate));

    // The machine's busy cores while pgbench runs: how much of the two cores the database's ceiling took.
    const beforePgbench = machineTicks();
    const pgbench = prepared.compare
      ? {
          ...(await prepared.compare(options.durationSeconds, log, options.connections)),
          machineCores: busyShare(beforePgbench, machineTicks()) * os.availableParallelism(),
        }
      : undefined;
    if (pgbench) log(`  the machine was busy ${pgbench.machineCores.toFixed(2)} of ${os.availableParallelism()} cores while pgbench ran`);

    let checks: TargetResult['checks'];
    if (ready.metricsUrl) {
      const fromMetrics = await serverChecks(ready.metricsUrl);
      if (fromMetrics.rateLimitFailOpen > 0)
        throw new Error(`${fromMetrics.rateLimitFailOpen} requests passed with rate limits failing open: Redis was not checked`);
      if (fromMetrics.rateLimitRefusals > 0)
        throw new Error(`${fromMetrics.rateLimitRefusals} requests refused by rate limits: the bench plan should never refuse`);
      checks = { ...fromMetrics, accessLines: 0, logFile };
    }
    server.send({ type: 'stop' });
    if (target.server === 'hearth-api') await server.next('stopped', 60_000);
    await server.exited;
    if (checks) {
      checks.accessLines = await countOccurrences(logFile, '"msg":"request"');
      if (checks.accessLines < checks.requestsServed && process.env.BENCH_EXPERIMENT !== 'no-access-log') {
        throw new Error(`the log has ${checks.accessLines} access lines for ${checks.requestsServed} requests: is the per-request line on?`);
      }
    }
    return { id: target.id, name: target.name, peak, pairedWithKoa, atShare: { ...atShare, rate }, pgbench, checks };
  } finally {
    loader.send({ type: 'stop' });
    const running = () => server.process.exitCode === null && server.process.signalCode === null;
    if (running()) {
      // After a failure: let the server drop its database if it can, then make sure it is gone.
      server.send({ type: 'stop' });
      await Promise.race([server.exited, new Promise((r) => setTimeout(r, 30_000).unref())]);
      if (running()) server.process.kill();
    }
    await Promise.all([loader.exited, server.exited]);
    putBack();
    await redis.quit();
  }
}

export async function runHttpBench(options: HttpBenchOptions, log: (line: string) => void): Promise<TargetResult[]> {
  fs.mkdirSync(options.logDir, { recursive: true });
  if (options.cpuProfDir) fs.mkdirSync(options.cpuProfDir, { recursive: true });
  const results: TargetResult[] = [];
  const chosen = TARGETS.filter((target) => !options.only || options.only.includes(target.id));
  // The reads compared with koa are measured beside it too, when koa is measured in this run.
  const koa = chosen.some((t) => t.id === 'koa') ? await startKoaBeside(options) : undefined;
  try {
    for (const target of chosen) {
      const beside = target.server !== 'koa-hello' && (target.placement ?? 'split') === 'split' ? koa : undefined;
      results.push(await runTarget(target, options, log, beside));
    }
  } finally {
    if (koa) {
      koa.server.send({ type: 'stop' });
      await koa.server.exited;
    }
  }
  return results;
}

async function startKoaBeside(options: HttpBenchOptions): Promise<KoaBeside> {
  const server = startChild('servers/koa-hello.ts', { role: 'server', placement: 'split', stdout: path.join(options.logDir, 'koa-beside.log') });
  const ready = await server.next('ready');
  return { server, url: ready.url + '/' };
}

export const DEFAULT_LOG_DIR = path.join(os.tmpdir(), 'hearth-bench');
