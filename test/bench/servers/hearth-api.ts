/**
 * Bench child: the real Hearth API over a fresh test database and Redis (rate limits on: a Redis Lua
 * call per request), logging at info (an access line per request) to this process's stdout, which
 * the runner sends to a file. Answers `ready` with what the loader needs, and stops on `stop`.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { type Logger, createLogger } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import { RedisCoordination } from '@hearth/core/coord';
import { SAVE_LIMITS } from '@hearth/core/shapes';
import { applyManifests, validateManifest } from '@hearth/core/manifests';
import { startApiServer } from '@hearth/api';
import { createTestDatabase } from '../../support/harness';
import { TEST_REDIS_URL } from '../../support/env';
import {
  blogCategory,
  blogPost,
  cardType,
  currency,
  environment,
  gameConfig,
  itemType,
  legalDocument,
  plan,
  product,
  project,
  serverKey,
  skillTree,
} from '../../support/manifests';
import { BENCH_PRODUCTS, BENCH_SKILL_NODES, benchNodeKey } from '../pgbench';
import { BENCH_ORIGIN, answerCpuQueries } from '../child';

/** Limits far above anything one core can serve: the bench measures the check, never a refusal. */
const NEVER_REFUSING = {
  requestsPerMinutePerEnvironment: 1_000_000_000,
  requestsPerMinutePerCredential: 1_000_000_000,
  requestsPerDayPerEnvironment: 1_000_000_000_000,
};

/**
 * BENCH_EXPERIMENT, for measuring what a part costs (never set by `make bench`; see docs/performance.md):
 * `no-access-log` logs at warn, so no access lines; `no-redis` answers every rate-limit check from
 * memory, allowed.
 */
function experiment(coordination: RedisCoordination): Logger {
  const name = process.env.BENCH_EXPERIMENT ?? '';
  if (name === 'no-redis') {
    coordination.rateLimit = async (checks) => ({
      allowed: true,
      nearest: { name: checks[0].name, limit: checks[0].limit, remaining: checks[0].limit, resetSeconds: 60 },
    });
  }
  return createLogger(name === 'no-access-log' ? 'warn' : 'info', 'hearth-bench');
}

/** The API's database pool (createTestDatabase's): pgbench runs with as many clients. */
const BENCH_POOL_SIZE = 10;

async function main(): Promise<void> {
  const database = await createTestDatabase();
  const redisPrefix = `hearth-bench:${randomBytes(6).toString('hex')}:`;
  const coordination = new RedisCoordination(TEST_REDIS_URL, { prefix: redisPrefix });
  const core = new HearthCore({ db: database.db, coordination, masterKey: randomBytes(32), logger: experiment(coordination) });
  await core.start();

  const docs = [
    plan('test', NEVER_REFUSING),
    // A store so the commerce routes serve (GET /commerce/catalog never calls it).
    project('bench', {
      store: { provider: 'steam', appId: 480, identity: 'bench', publisherKey: { env: 'HEARTH_BENCH_STORE_KEY' }, baseUrl: 'http://127.0.0.1:9' },
    } as never),
    // A browser game's page may call it (the CORS targets).
    { ...environment('bench-live', 'bench'), spec: { project: 'bench', appKey: 'bench-live', cors: { allowedOrigins: [BENCH_ORIGIN] } } } as never,
    serverKey('bench-live-key', 'bench-live'),
    gameConfig('bench-live', {
      environment: 'bench-live',
      values: [
        { key: 'max_party_size', type: 'int', value: 4, groupName: 'matchmaking' },
        { key: 'motd', type: 'string', value: 'Welcome' },
      ],
      flags: [
        { name: 'new_shop', enabled: true },
        { name: 'winter_event', enabled: false },
        { name: 'ranked_queue', enabled: true },
        { name: 'voice_chat', enabled: false },
      ],
    }),
    // What GET /legal/documents and GET /blog/posts answer, from each process's cache.
    legalDocument('terms', { environment: 'bench-live', title: 'Terms of Service', url: 'https://example.com/terms', version: '3', required: true }),
    legalDocument('privacy', { environment: 'bench-live', title: 'Privacy', url: 'https://example.com/privacy', version: '2', required: true }),
    // What the currency credit targets move (no max: a balance may grow to 2^53-1).
    currency('bench-gold', { environment: 'bench-live', key: 'gold', name: 'Gold', scope: 'account', kind: 'balance' }),
    // What the item purchase target buys: a counted item on the account, one price in gold.
    itemType('bench-potion', {
      environment: 'bench-live',
      key: 'potion',
      name: 'Potion',
      category: 'consumable',
      ownership: 'counted',
      scope: 'account',
      purchasable: true,
      priceRule: 'all',
      prices: [{ currencyKey: 'gold', amount: 1 }],
    }),
    // What the card purchase target buys: a card type with one price in gold.
    cardType('bench-rune', { environment: 'bench-live', slug: 'rune', name: 'Rune', purchasable: true, prices: [{ currencyKey: 'gold', amount: 1 }] }),
    // What the skill-node unlock target unlocks: BENCH_SKILL_NODES roots in trees of 64, each 1 gold.
    ...Array.from({ length: BENCH_SKILL_NODES / 64 }, (_, t) =>
      skillTree(`bench-tree-${t}`, {
        environment: 'bench-live',
        name: `Tree ${t}`,
        nodes: Array.from({ length: 64 }, (_, n) => ({
          key: benchNodeKey(t * 64 + n),
          name: `Node ${t * 64 + n}`,
          prices: [{ currencyKey: 'gold', amount: 1 }],
        })),
      }),
    ),
    // What GET /commerce/catalog answers: BENCH_PRODUCTS products, priced in three currencies.
    ...Array.from({ length: BENCH_PRODUCTS }, (_, i) =>
      product(`bench-product-${i + 1}`, {
        environment: 'bench-live',
        sku: `pack-${String(i + 1).padStart(2, '0')}`,
        name: `Pack ${i + 1}`,
        description: 'Gems and a badge.',
        storeItemId: i + 1,
        entitlement: `pack-${i + 1}`,
        repeatable: i % 2 === 0,
        prices: [
          { currency: 'USD', amount: 99 + i * 100 },
          { currency: 'EUR', amount: 89 + i * 90 },
          { currency: 'GBP', amount: 79 + i * 80 },
        ],
      }),
    ),
    blogCategory('news', { environment: 'bench-live', name: 'News', description: 'What is new' }),
    ...Array.from({ length: 12 }, (_, i) =>
      blogPost(`post-${i + 1}`, {
        environment: 'bench-live',
        title: `Patch ${i + 1}`,
        excerpt: 'What changed this week.',
        content: { blocks: [{ type: 'paragraph', text: 'Balance changes and fixes. '.repeat(20) }] },
        category: 'news',
        tags: [{ slug: 'patch', name: 'Patch' }],
        status: 'published',
        publishedAt: new Date(Date.UTC(2026, 10, 1 + i)).toISOString(),
      }),
    ),
  ];
  const loaded = docs.map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `bench#${i + 1}`), origin: `bench#${i + 1}` }));
  const results = await applyManifests(database.db, loaded, core.bus);
  const key = results.find((r) => r.serverKey)?.serverKey?.key;
  if (!key) throw new Error('the ServerKey manifest minted no key');

  const api = await startApiServer({ core, port: 0, host: '127.0.0.1', metricsPort: 0 });

  let databaseQueries = 0;
  // `capture`: the statements the next requests make, as the driver sends them (for pgbench scripts
  // that run the same transaction as a route: test/bench/pgbench.ts capturedScript).
  let captured: { sql: string; bindings: unknown[] }[] | undefined;
  database.db.on('query', (q: { sql: string; bindings?: unknown[] }) => {
    databaseQueries++;
    captured?.push({ sql: q.sql, bindings: q.bindings ?? [] });
  });
  process.on('message', (message: any) => {
    if (message?.type !== 'capture') return;
    if (message.on) captured = [];
    else {
      process.send!({ type: 'captured', queries: captured ?? [] });
      captured = undefined;
    }
  });
  answerCpuQueries(() => databaseQueries);
  process.on(
    'message',
    (message: any) =>
      void (async () => {
        if (message?.type !== 'stop') return;
        await api.close();
        await core.stop();
        await coordination.close();
        await database.drop();
        // Rate-limit counters of the day window would otherwise linger for a day.
        const redis = new Redis(TEST_REDIS_URL);
        const stale = await redis.keys(`${redisPrefix}*`);
        if (stale.length > 0) await redis.unlink(...stale);
        await redis.quit();
        process.send!({ type: 'stopped' }, () => process.exit(0));
      })(),
  );
  const environmentId = (await database.db('environments').where({ app_key: 'bench-live' }).first('id')).id;
  const planLimit = (plan('test', NEVER_REFUSING) as any).spec.playerDataBytesPerEnvironment;
  process.send!({
    type: 'ready',
    url: api.url,
    base: `${api.url}/v1`,
    metricsUrl: api.metricsUrl,
    serverKey: key,
    // For the saves bench's pgbench run on this database, with as many connections as the API's pool.
    databaseUrl: database.url,
    databasePoolSize: BENCH_POOL_SIZE,
    environmentId: Number(environmentId),
    // The byte limits the API passes to hearth_save_write (the player's, and the plan's for the environment).
    playerSaveLimit: SAVE_LIMITS.playerBytes,
    environmentSaveLimit: Number(planLimit),
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
