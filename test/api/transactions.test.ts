/**
 * One transaction per effect, on the production routes: a fault at the commit of a route's
 * transaction (after every write its core services made) rolls back the effect, the idempotency
 * record and every announcement with it (session events, cache invalidations); a retry then acts once,
 * and duplicates arriving together act once.
 *
 * The fault is PostgreSQL's, not the test's code: a deferred constraint trigger on the table a route
 * writes fires at COMMIT, after all of the route's statements, and either fails the commit (SQLSTATE
 * 57P03, as when the server goes away: the API answers 503 `unavailable`, retry later) or holds it on an
 * advisory lock the test owns, so the test can look at the world between the writes and the commit.
 * Nothing in the API knows about it.
 */
import { randomUUID } from 'node:crypto';
import { INVALIDATION_CHANNEL, type Invalidation } from '@hearth/core';
import { RedisCoordination, type Unsubscribe } from '@hearth/core/coord';
import type { Knex } from 'knex';
import { type Harness, startHarness } from '../support/harness';
import { TEST_REDIS_URL } from '../support/env';
import { call, expectError } from '../support/http';
import { itemType, standardManifests } from '../support/manifests';
import { EventLog, type TestPlayer, join, newPlayer, newSession, waitForLockWaiters } from '../sessions/helpers';
import { eventually } from '../support/wait';

/** The advisory lock a held commit waits on, shared, while the test holds it exclusively. */
const HOLD_LOCK = 0x7e57;
/** The tables whose commits the test can fail or hold. */
const FAULTY_TABLES = ['sessions', 'players', 'items'] as const;
type FaultyTable = (typeof FAULTY_TABLES)[number];

const FAULT_SQL = `
  CREATE TABLE test_faults (table_name text PRIMARY KEY, hold boolean NOT NULL, fails int NOT NULL);
  -- Counts the commits that reached the trigger; a sequence, so a failed commit's count stays.
  CREATE SEQUENCE test_fault_ticks;
  CREATE FUNCTION test_fault_at_commit() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE f test_faults%ROWTYPE;
  BEGIN
    SELECT * INTO f FROM test_faults WHERE table_name = TG_TABLE_NAME;
    IF NOT FOUND THEN RETURN NULL; END IF;
    IF f.hold THEN PERFORM pg_advisory_xact_lock_shared(${HOLD_LOCK}); END IF;
    IF nextval('test_fault_ticks') <= f.fails THEN
      RAISE EXCEPTION 'a fault injected at commit' USING ERRCODE = '57P03';
    END IF;
    RETURN NULL;
  END $fn$;
  ${FAULTY_TABLES.map(
    (t) => `CREATE CONSTRAINT TRIGGER test_fault_at_commit AFTER INSERT OR UPDATE OR DELETE ON ${t}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_fault_at_commit();`,
  ).join('\n')}
`;

let h: Harness;
let log: EventLog;
let listener: RedisCoordination;
let stopListening: Unsubscribe;
const invalidations: Invalidation[] = [];
/** The test's exclusive hold of HOLD_LOCK while a commit is held. */
let hold: Knex.Transaction | null = null;

beforeAll(async () => {
  h = await startHarness({
    manifests: [...standardManifests(), itemType('relic', { environment: 'alpha-live', name: 'Relic', category: 'misc', ownership: 'one-by-one' })],
  });
  await h.db.raw(FAULT_SQL);
  log = new EventLog(h);
  await log.start();
  // Another process's ear on the invalidation channel.
  listener = new RedisCoordination(TEST_REDIS_URL, { prefix: h.redisPrefix });
  stopListening = await listener.subscribe(INVALIDATION_CHANNEL, (message) => invalidations.push(JSON.parse(message) as Invalidation));
});
// A test that fails while a commit is held must not leave it held, nor its faults armed.
afterEach(async () => {
  await release();
  await h.db('test_faults').delete();
});
afterAll(async () => {
  await stopListening?.();
  await listener?.close();
  await log?.stop();
  await h?.close();
});

/** The next commits that write `table`: the first `fails` of them fail; with `hold`, each waits for release(). */
async function arm(table: FaultyTable, opts: { fails?: number; hold?: boolean }): Promise<void> {
  if (opts.hold) {
    hold = await h.db.transaction();
    await hold.raw('SELECT pg_advisory_xact_lock(?)', [HOLD_LOCK]);
  }
  await h.db.raw("SELECT setval('test_fault_ticks', 1, false)");
  await h
    .db('test_faults')
    .insert({ table_name: table, hold: opts.hold ?? false, fails: opts.fails ?? 0 })
    .onConflict('table_name')
    .merge();
}

/** Lets held commits go on. */
async function release(): Promise<void> {
  const held = hold;
  hold = null;
  await held?.commit();
}

/** Waits (bounded) until `n` commits wait on the hold: they have written everything and not committed. */
async function heldCommits(n: number): Promise<void> {
  const held = async () =>
    (await h.db.raw("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = ?", [HOLD_LOCK])).rows[0].n as number;
  await eventually(async () => (await held()) >= n, 5000, 10).catch(async () => {
    throw new Error(`expected ${n} held commits, saw ${await held()}`);
  });
}

const count = async (table: string, where: Record<string, unknown> = {}) =>
  Number((await h.db(table).where(where).count<{ count: string }[]>('* as count'))[0].count);
const recordOf = (key: string) => h.db('idempotency_records').where({ key }).first();
const sessionEventsOf = (p: TestPlayer) =>
  log.events.filter((e) => e.session.players.some((s) => s.playerId === p.id) || e.removed.some((r) => r.playerId === p.id));
const invalidationsOf = (p: TestPlayer) => invalidations.filter((i) => i.kind === 'player' && i.playerId === p.id);

/**
 * The player's invalidations once `n` have arrived (bounded) and no more can come of what was
 * answered so far: a marker published now reaches the listener after every invalidation published
 * before it (Redis keeps a channel's order), and the API announces before it answers.
 */
async function invalidationsSettled(p: TestPlayer, n: number): Promise<Invalidation[]> {
  await eventually(async () => invalidationsOf(p).length >= n, 3000, 10).catch(() => undefined); // the caller checks what came
  const marker = { kind: 'server-key', keyId: `marker-${randomUUID()}` } as const; // names no key: every process drops nothing
  await listener.publish(INVALIDATION_CHANNEL, JSON.stringify(marker));
  await eventually(async () => invalidations.some((i) => i.kind === 'server-key' && i.keyId === marker.keyId), 3000, 5);
  return invalidationsOf(p);
}

describe('POST /sessions', () => {
  const lobby = { gameMode: 'duel', map: 'harbor' };
  const create = (p: TestPlayer) => call(h.base, 'POST', '/sessions', { token: p.token, body: lobby });

  test('a commit that fails answers 503 and leaves no session, no seat and no event; the retry makes one', async () => {
    const p = await newPlayer(h);
    const sessionsBefore = await count('sessions');
    await arm('sessions', { fails: 1 });

    expectError(await create(p), 503, 'unavailable');
    expect(await count('sessions')).toBe(sessionsBefore);
    expect(await count('session_players', { player_id: p.id })).toBe(0);

    const retry = await create(p);
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ status: 'CONFIGURING', players: [{ playerId: p.id, isHost: true }] });
    // The retry's event arrives; the failed commit's would have come before it on the same channel.
    await log.exactly(retry.body.id, 1);
    expect(sessionEventsOf(p)).toHaveLength(1);
    expect(await count('sessions')).toBe(sessionsBefore + 1);
  });

  test('its event goes out only once the transaction has committed', async () => {
    const p = await newPlayer(h);
    await arm('sessions', { hold: true });
    const reply = create(p);
    await heldCommits(1);
    // Written, not committed: nobody outside the transaction sees the seat, and nobody has heard of it.
    await log.settled();
    expect(await count('session_players', { player_id: p.id })).toBe(0);
    expect(sessionEventsOf(p)).toHaveLength(0);
    await release();

    const created = await reply;
    expect(created.status).toBe(201);
    const [event] = await log.exactly(created.body.id, 1);
    expect(log.seatsWhenArrived(event)).toEqual([p.id]);
  });
});

describe('POST /players/:playerId/items/grant with an Idempotency-Key', () => {
  const grant = (p: TestPlayer, key: string) =>
    call(h.base, 'POST', `/players/${p.id}/items/grant`, {
      token: h.serverKeys['alpha-live-key'],
      body: { itemTypeKey: 'relic' },
      headers: { 'Idempotency-Key': key },
    });

  test('a commit that fails leaves no item and no record; the retry grants once and replays after', async () => {
    const p = await newPlayer(h);
    await arm('items', { fails: 1 });

    expectError(await grant(p, 'tx-fault'), 503, 'unavailable');
    expect(await count('items', { item_type_key: 'relic' })).toBe(0);
    expect(await recordOf('tx-fault')).toBeUndefined();

    const retry = await grant(p, 'tx-fault');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('false');
    expect(retry.body.items).toHaveLength(1);

    const replay = await grant(p, 'tx-fault');
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
    expect(await h.db('items').where({ item_type_key: 'relic' }).pluck('id')).toEqual([retry.body.items[0].id]);
  });

  test('two requests at once with one key act once: the second waits for the first and replays its answer', async () => {
    const p = await newPlayer(h);
    await arm('items', { hold: true });
    const first = grant(p, 'tx-twins');
    await heldCommits(1); // the first has written, inside its transaction
    const second = grant(p, 'tx-twins');
    await waitForLockWaiters(h, 2); // the second waits on the first's claim of the key
    await release();

    const replies = await Promise.all([first, second]);
    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(replies[1].body).toEqual(replies[0].body);
    expect(replies.map((r) => r.headers.get('idempotent-replayed')).sort()).toEqual(['false', 'true']);
    expect(
      await h
        .db('items')
        .whereIn('inventory_id', h.db('inventories').where({ player_id: p.id }).select('id'))
        .pluck('id'),
    ).toEqual([replies[0].body.items[0].id]);
  });

  test('a duplicate waiting on a first whose commit fails acts itself, once', async () => {
    const p = await newPlayer(h);
    await arm('items', { hold: true, fails: 1 });
    const first = grant(p, 'tx-fault-twins');
    await heldCommits(1);
    const second = grant(p, 'tx-fault-twins');
    await waitForLockWaiters(h, 2);
    await release();

    const [faulted, acted] = await Promise.all([first, second]);
    expectError(faulted, 503, 'unavailable');
    expect(acted.status).toBe(200);
    expect(acted.headers.get('idempotent-replayed')).toBe('false');
    expect(
      await h
        .db('items')
        .whereIn('inventory_id', h.db('inventories').where({ player_id: p.id }).select('id'))
        .pluck('id'),
    ).toEqual([acted.body.items[0].id]);
    expect((await recordOf('tx-fault-twins')).body).toEqual(acted.body);
  });
});

describe('players', () => {
  test('a rename whose commit fails changes no name, in the database or any cache, and is not announced', async () => {
    const p = await newPlayer(h, 'alpha-live-key', 'Before');
    const nameOfMe = async () => (await call(h.base, 'GET', '/players/me', { token: p.token })).body.displayName;
    const rename = () => call(h.base, 'PATCH', '/players/me', { token: p.token, body: { displayName: 'After' } });
    expect(await nameOfMe()).toBe('Before'); // now cached
    await arm('players', { fails: 1 });

    expectError(await rename(), 503, 'unavailable');
    expect((await h.db('players').where({ id: p.id }).first()).display_name).toBe('Before');
    expect(await nameOfMe()).toBe('Before');
    expect(await invalidationsSettled(p, 0)).toEqual([]);

    const retry = await rename();
    expect(retry.status).toBe(200);
    expect(retry.body.displayName).toBe('After');
    expect(await nameOfMe()).toBe('After'); // this process dropped its copy on commit
    expect(await invalidationsSettled(p, 1)).toEqual([{ kind: 'player', playerId: p.id, reason: 'renamed' }]);
  });

  test('a deletion whose commit fails ends no seat and deletes nothing; the retry deletes with its events', async () => {
    const host = await newPlayer(h);
    const p = await newPlayer(h);
    const session = await newSession(h, host);
    expect((await join(h, p, session.id)).status).toBe(200);
    await log.exactly(session.id, 2);
    const { environment_id: envId } = await h.db('players').where({ id: p.id }).first('environment_id');
    const playerCount = async () => Number((await h.db('environments').where({ id: envId }).first('player_count')).player_count);
    const countBefore = await playerCount();
    const remove = () => call(h.base, 'DELETE', `/players/${p.id}`, { token: h.serverKeys['alpha-live-key'] });
    await arm('players', { fails: 1 });

    expectError(await remove(), 503, 'unavailable');
    expect(await count('players', { id: p.id })).toBe(1);
    expect(await count('session_players', { player_id: p.id })).toBe(1);
    expect(await playerCount()).toBe(countBefore);
    expect((await call(h.base, 'GET', '/players/me', { token: p.token })).status).toBe(200);
    expect(await invalidationsSettled(p, 0)).toEqual([]);

    const retry = await remove();
    expect(retry.status).toBe(204);
    expect(await count('players', { id: p.id })).toBe(0);
    expect(await count('session_players', { player_id: p.id })).toBe(0);
    expect(await playerCount()).toBe(countBefore - 1);
    // One event for the ended seat (none for the failed commit) and one invalidation.
    const events = await log.exactly(session.id, 3);
    expect(events[2]).toMatchObject({ removed: [{ playerId: p.id, reason: 'deleted' }], added: [] });
    expect(await invalidationsSettled(p, 1)).toEqual([{ kind: 'player', playerId: p.id, reason: 'deleted' }]);
    expectError(await call(h.base, 'GET', '/players/me', { token: p.token }), 401, 'unauthorized');
  });
});
