/**
 * Every process's /metrics moves when its event happens (real requests against a real API and
 * realtime process, then their metrics pages read), and labels stay bounded: many distinct ids and
 * paths add no label value (docs/operations.md lists the metrics).
 */
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { eventually } from '../support/wait';
import { currency, environment, itemType, plan, project, serverKey, standardManifests } from '../support/manifests';
import { Client, type RealtimeInstance, startRealtime } from '../realtime/support';
import { type Sample, labelValues, scrape, seriesOf, total } from './scrape';

const env = 'alpha-live';
let h: Harness;
let rt: RealtimeInstance;
let key: string;
let seq = 0;
const idem = () => `obs-${Date.now()}-${++seq}`;
const apiMetrics = () => scrape(h.api.metricsUrl!);

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      // A project whose players may make 3 requests a minute each: the rate-limit refusal.
      plan('tiny', { requestsPerMinutePerCredential: 3 }),
      project('tiny', { plan: 'tiny' }),
      environment('tiny-live', 'tiny'),
      serverKey('tiny-live-key', 'tiny-live'),
      currency('gold', { environment: env, name: 'gold', scope: 'account', kind: 'balance' }),
      currency('energy', { environment: env, name: 'energy', scope: 'account', kind: 'consumed', max: 500 }),
      itemType('potion', {
        environment: env,
        name: 'potion',
        category: 'misc',
        ownership: 'counted',
        purchasable: true,
        prices: [{ currencyKey: 'gold', amount: 10 }],
      }),
    ],
  });
  key = h.serverKeys['alpha-live-key'];
  rt = await startRealtime(h, { tickMs: 100 });
});
afterAll(async () => {
  await rt?.stop();
  await h?.close();
});

/** How much each of `reads` moved between two scrapes around `act`. */
async function moves(reads: Record<string, (s: Sample[]) => number>, act: () => Promise<void>, url = h.api.metricsUrl!): Promise<Record<string, number>> {
  const before = await scrape(url);
  await act();
  const after = await scrape(url);
  return Object.fromEntries(Object.entries(reads).map(([name, read]) => [name, read(after) - read(before)]));
}

test('RED per route template: requests, refusals by error code, and the duration histogram from 1 ms to 5 s', async () => {
  const { accessToken, player } = await signIn(h.base, key, 'red');
  // GET /players/me is the route /players/:playerId: the template is the label, never the path.
  const route = { route: '/players/:playerId', method: 'GET' };
  const moved = await moves(
    {
      ok: (s) => total(s, 'hearth_http_requests_total', { ...route, status: '200' }),
      unauthorized: (s) => total(s, 'hearth_http_requests_total', { ...route, status: '401' }),
      refusal: (s) => total(s, 'hearth_http_refusals_total', { route: '/players/:playerId', error: 'unauthorized' }),
      timed: (s) => total(s, 'hearth_http_request_duration_seconds_count', { ...route, status: '200' }),
      slowest: (s) => total(s, 'hearth_http_request_duration_seconds_bucket', { ...route, status: '200', le: '5' }),
    },
    async () => {
      expect((await call(h.base, 'GET', '/players/me', { token: accessToken })).body.id).toBe(player.id);
      expect((await call(h.base, 'GET', '/players/me', { token: accessToken })).status).toBe(200);
      expectError(await call(h.base, 'GET', '/players/me'), 401, 'unauthorized');
    },
  );
  expect(moved).toEqual({ ok: 2, unauthorized: 1, refusal: 1, timed: 2, slowest: 2 });
  const buckets = (await apiMetrics()).filter((s) => s.name === 'hearth_http_request_duration_seconds_bucket' && s.labels.route === '/players/:playerId');
  expect(new Set(buckets.map((b) => b.labels.le))).toEqual(
    new Set(['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '+Inf']),
  );
});

test('credential outcomes: accepted by kind, refused by reason', async () => {
  const { accessToken, player } = await signIn(h.base, key, 'creds');
  const outcome = (kind: string, o: string) => (s: Sample[]) => total(s, 'hearth_credential_checks_total', { kind, outcome: o });
  const moved = await moves(
    {
      server: outcome('server', 'accepted'),
      player: outcome('player', 'accepted'),
      missing: outcome('unknown', 'missing'),
      malformed: outcome('unknown', 'malformed'),
      invalidPlayer: outcome('player', 'invalid'),
      invalidServer: outcome('server', 'invalid'),
      wrongKind: outcome('server', 'wrong-kind'),
    },
    async () => {
      expect((await call(h.base, 'GET', '/players/me', { token: accessToken })).status).toBe(200);
      expectError(await call(h.base, 'GET', '/players/me'), 401, 'unauthorized');
      expectError(await call(h.base, 'GET', '/players/me', { headers: { Authorization: 'Basic abc' } }), 401, 'unauthorized');
      expectError(await call(h.base, 'GET', '/players/me', { token: 'not.a.token' }), 401, 'unauthorized');
      expectError(await call(h.base, 'GET', '/players/me', { token: `${key.slice(0, -4)}AAAA` }), 401, 'unauthorized');
      expect((await call(h.base, 'GET', `/players/${player.id}`, { token: key })).status).toBe(200);
      // GET /realtime takes a player token: a good server key is refused for its kind (wrong-kind, not accepted).
      expectError(await call(h.base, 'GET', '/realtime', { token: key }), 403, 'forbidden');
    },
  );
  expect(moved).toEqual({ server: 1, player: 1, missing: 1, malformed: 1, invalidPlayer: 1, invalidServer: 1, wrongKind: 1 });
});

test('rate limits: every limit checked is counted, a refusal by the limit that refused', async () => {
  const tiny = h.serverKeys['tiny-live-key'];
  const { accessToken } = await signIn(h.base, tiny, 'limited');
  const moved = await moves(
    {
      credentialChecks: (s) => total(s, 'hearth_rate_limit_checks_total', { limit: 'credential-minute' }),
      environmentChecks: (s) => total(s, 'hearth_rate_limit_checks_total', { limit: 'environment-minute' }),
      refusals: (s) => total(s, 'hearth_rate_limit_refusals_total', { limit: 'credential-minute' }),
      refusalsByCode: (s) => total(s, 'hearth_http_refusals_total', { route: '/players/:playerId', error: 'rate-limited' }),
    },
    async () => {
      for (let i = 0; i < 3; i++) expect((await call(h.base, 'GET', '/players/me', { token: accessToken })).status).toBe(200);
      expectError(await call(h.base, 'GET', '/players/me', { token: accessToken }), 429, 'rate-limited');
    },
  );
  expect(moved).toEqual({ credentialChecks: 4, environmentChecks: 4, refusals: 1, refusalsByCode: 1 });
});

test('ledger moves by kind and source, idempotency replays and conflicts, a replay moving nothing', async () => {
  const { player } = await signIn(h.base, key, 'ledger');
  const move = (kind: string, body: Record<string, unknown>, k = idem()) =>
    call(h.base, 'POST', `/players/${player.id}/currencies/${body.currency ?? 'gold'}/${kind}`, {
      token: key,
      body: { amount: body.amount, reason: 'test', ...(body.allowance !== undefined ? { allowance: body.allowance } : {}) },
      headers: { 'Idempotency-Key': k },
    });
  const ledger = (kind: string, source: string) => (s: Sample[]) => total(s, 'hearth_ledger_moves_total', { kind, source });
  const idempotency = (outcome: string) => (s: Sample[]) => total(s, 'hearth_idempotency_requests_total', { outcome });
  const moved = await moves(
    {
      credit: ledger('credit', 'move'),
      debit: ledger('debit', 'move'),
      refund: ledger('refund', 'move'),
      consume: ledger('consume', 'move'),
      charge: ledger('debit', 'purchase'),
      first: idempotency('first'),
      replayed: idempotency('replayed'),
      conflict: idempotency('conflict'),
    },
    async () => {
      const creditKey = idem();
      expect((await move('credit', { amount: 100 }, creditKey)).body.replayed).toBe(false);
      expect((await move('credit', { amount: 100 }, creditKey)).body.replayed).toBe(true);
      expectError(await move('credit', { amount: 5 }, creditKey), 409, 'idempotency-conflict');
      expect((await move('debit', { amount: 10 })).status).toBe(200);
      expect((await move('refund', { amount: 10 })).status).toBe(200);
      expect((await move('consume', { currency: 'energy', amount: 5, allowance: 100 })).status).toBe(200);
      // A refused move is no ledger entry, and no idempotency outcome (its key stays free).
      expectError(await move('debit', { amount: 1_000_000 }), 409, 'insufficient-balance');
      const bought = await call(h.base, 'POST', `/players/${player.id}/purchases/items`, { token: key, body: { itemTypeKey: 'potion', quantity: 2 } });
      expect(bought.status).toBe(200);
    },
  );
  expect(moved).toEqual({ credit: 1, debit: 1, refund: 1, consume: 1, charge: 1, first: 4, replayed: 1, conflict: 1 });
});

test('save writes and the bytes written', async () => {
  const { player } = await signIn(h.base, key, 'saver');
  const data = { level: 3, name: 'x'.repeat(100) };
  const size = Buffer.byteLength(JSON.stringify(data));
  const moved = await moves(
    {
      bytes: (s) => total(s, 'hearth_save_bytes_written_total'),
      created: (s) => total(s, 'hearth_save_writes_total', { outcome: 'created' }),
      replaced: (s) => total(s, 'hearth_save_writes_total', { outcome: 'replaced' }),
    },
    async () => {
      expect((await call(h.base, 'PUT', `/players/${player.id}/data/slot1`, { token: key, body: { data } })).status).toBe(201);
      expect((await call(h.base, 'PUT', `/players/${player.id}/data/slot1`, { token: key, body: { data, expectedVersion: 1 } })).status).toBe(200);
      // A refused write (wrong version) writes nothing.
      expectError(await call(h.base, 'PUT', `/players/${player.id}/data/slot1`, { token: key, body: { data, expectedVersion: 1 } }), 409, 'conflict');
    },
  );
  expect(moved).toEqual({ bytes: 2 * size, created: 1, replaced: 1 });
});

test('PostgreSQL pool and query duration by statement kind, Redis command duration by command, Node process metrics', async () => {
  const moved = await moves(
    {
      selects: (s) => total(s, 'hearth_db_query_duration_seconds_count', { statement: 'select', outcome: 'ok' }),
      evalsha: (s) => total(s, 'hearth_redis_command_duration_seconds_count', { command: 'evalsha', outcome: 'ok' }),
    },
    async () => {
      // A player unknown to this process's caches: its state is read from PostgreSQL; every request checks its limits in Redis.
      const { accessToken } = await signIn(h.base, key, 'stores');
      expect((await call(h.base, 'GET', '/players/me', { token: accessToken })).status).toBe(200);
    },
  );
  expect(moved.selects).toBeGreaterThan(0);
  expect(moved.evalsha).toBeGreaterThan(0);
  const samples = await apiMetrics();
  expect(labelValues(samples, 'hearth_db_pool_connections', 'state')).toEqual(new Set(['used', 'free', 'pending']));
  expect(total(samples, 'hearth_db_pool_connections', { state: 'free' }) + total(samples, 'hearth_db_pool_connections', { state: 'used' })).toBeGreaterThan(0);
  // A statement's kind is a closed set: never its text.
  for (const statement of labelValues(samples, 'hearth_db_query_duration_seconds_count', 'statement')) {
    expect(['select', 'insert', 'update', 'delete', 'with', 'begin', 'commit', 'rollback', 'savepoint', 'lock', 'other']).toContain(statement);
  }
  expect(total(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  // The event loop's lag is exported as one finite, non-negative figure (its absence would read 0 in total()).
  const lag = samples.filter((s) => s.name === 'nodejs_eventloop_lag_seconds');
  expect(lag).toHaveLength(1);
  expect(Number.isFinite(lag[0].value) && lag[0].value >= 0).toBe(true);
  expect(samples.some((s) => s.name === 'nodejs_heap_size_used_bytes')).toBe(true);
});

test('realtime: connections, frames, closes by code, fan-out latency, and its own pool, Redis and Node metrics', async () => {
  const host = await signIn(h.base, key, 'rt-host', 'host');
  const moved = await moves(
    {
      authorize: (s) => total(s, 'hearth_realtime_frames_in_total', { type: 'authorize' }),
      sessionFrames: (s) => total(s, 'hearth_realtime_frames_out_total', { type: 'session' }),
      events: (s) => total(s, 'hearth_realtime_session_events_total'),
      lag: (s) => total(s, 'hearth_realtime_event_lag_seconds_count'),
      closes: (s) => total(s, 'hearth_realtime_closes_total', { code: '1000' }),
    },
    async () => {
      const socket = await Client.authorized(rt.url, host.accessToken);
      const made = await call(h.base, 'POST', '/sessions', { token: host.accessToken, body: { gameMode: 'duel', map: 'harbour' } });
      expect(made.status).toBe(201);
      expect((await socket.next()).type).toBe('session');
      expect(total(await scrape(rt.metricsUrl!), 'hearth_realtime_connections', { state: 'authorized' })).toBe(1);
      socket.ws.close(1000);
      await new Promise((resolve) => socket.ws.once('close', resolve));
      // The server counts the close once its side is closed too.
      await eventually(async () => total(await scrape(rt.metricsUrl!), 'hearth_realtime_connections', { state: 'authorized' }) === 0, 1000, 20);
    },
    rt.metricsUrl!,
  );
  expect(moved).toEqual({ authorize: 1, sessionFrames: 1, events: 1, lag: 1, closes: 1 });
  const samples = await scrape(rt.metricsUrl!);
  expect(total(samples, 'hearth_db_query_duration_seconds_count')).toBeGreaterThan(0);
  expect(total(samples, 'hearth_redis_command_duration_seconds_count')).toBeGreaterThan(0);
  expect(total(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
});

test('cardinality: many distinct ids and paths add no label value', async () => {
  const { accessToken } = await signIn(h.base, key, 'cardinal');
  // Warm-up: one request of each shape, so every series the shapes make exists.
  const shapes = async (i: number) => {
    await call(h.base, 'GET', `/players/${'p'.repeat(8)}${i}`, { token: key }); // a route with an id: 404 or 400
    await call(h.base, 'GET', `/no/such/path/${i}`); // no route at all
    await call(h.base, 'GET', `/players/me?unknown${i}=1`, { token: accessToken }); // an unknown parameter
    await call(h.base, 'PUT', `/players/me/data/slot-${i}`, { token: accessToken, body: { data: { i } } });
  };
  await shapes(0);
  const before = seriesOf(await apiMetrics());
  for (let i = 1; i <= 40; i++) await shapes(i);
  const after = await apiMetrics();
  const added = [...seriesOf(after)].filter((s) => !before.has(s));
  expect(added).toEqual([]);
  const routes = labelValues(after, 'hearth_http_requests_total', 'route');
  for (const route of routes) expect(route === 'unmatched' || route === 'unparsed' || route.startsWith('/')).toBe(true);
  expect([...routes].some((r) => /slot-|p{8}|no\/such/.test(r))).toBe(false);
});
