/**
 * Reconcilers write through the domain functions the CLI calls, so their changes reach every API
 * process the same way: a ServerKey moved or removed is refused at once by another process that had
 * it cached, a GameConfig applied or removed changes the ETags another process answers at once.
 * Announcements go out after the commit, each once, and never for a refused batch.
 */
import { INVALIDATION_CHANNEL, type Invalidation, InvalidationBus, announceAfterCommit } from '@hearth/core';
import { MANIFEST_KINDS, type ManifestKind, isRemovable, reconcileManifest, removeManifest, validateManifest } from '@hearth/core/manifests';
import { MemoryCoordination } from '@hearth/core/coord';
import { inTransaction } from '@hearth/core/db';
import { type ApiInstance, type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { NAMESPACE, environment, gameConfig, plan, project, serverKey, standardManifests } from '../support/manifests';
import { eventually } from '../support/wait';

/** The verifier caches a server key for 5 s, content versions for 30 s: a push must beat both by far. */
const PUSHED_WITHIN_MS = 1500;

let h: Harness;
let other: ApiInstance;
/** What the other process heard over Redis (the announcer also hears its own, twice: at once and echoed). */
let heard: Invalidation[];

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      // An environment already at its plan's single live key.
      plan('one-key', { serverKeysPerEnvironment: 1 }),
      project('full', { plan: 'one-key' }),
      environment('full-live', 'full'),
      serverKey('full-live-key', 'full-live'),
    ],
  });
  other = await h.startAnotherApi();
  // What was announced over Redis (the content watch also hears content changes from PostgreSQL).
  await other.core.coordination.subscribe(INVALIDATION_CHANNEL, (message) => heard.push(JSON.parse(message) as Invalidation));
});
beforeEach(() => {
  heard = [];
});
afterAll(async () => {
  await h.close();
});

/** A marker no cache acts on: Redis delivers in order, so once it arrives, everything announced before it has. */
const MARKER: Invalidation = { kind: 'content', environmentId: -1 };

/** Everything announced since the last call, as the other process heard it. */
async function announced(): Promise<Invalidation[]> {
  await h.core.bus.announce(MARKER);
  await eventually(async () => heard.some((e) => JSON.stringify(e) === JSON.stringify(MARKER)), 2000, 5);
  const events = heard.slice(
    0,
    heard.findIndex((e) => JSON.stringify(e) === JSON.stringify(MARKER)),
  );
  heard = [];
  return events;
}

const flags = (base: string, token: string, etag?: string) => call(base, 'GET', '/flags', { token, headers: etag ? { 'If-None-Match': etag } : {} });
const keyIdOf = (key: string) => key.split('_')[1];

async function environmentId(appKey: string): Promise<number> {
  return Number((await h.db('environments').where({ app_key: appKey }).first('id')).id);
}

/** Both processes use the key, so each holds it in its cache as good. */
async function cachedAsGoodByBoth(key: string): Promise<void> {
  expect((await flags(h.base, key)).status).toBe(200);
  expect((await flags(other.base, key)).status).toBe(200);
}

async function refusedByTheOtherWithinMoments(key: string): Promise<void> {
  const tookMs = await eventually(async () => (await flags(other.base, key)).status === 401, PUSHED_WITHIN_MS);
  expect(tookMs).toBeLessThan(PUSHED_WITHIN_MS);
  expectError(await flags(other.base, key), 401, 'unauthorized');
}

describe('ServerKey', () => {
  test('pointed at another environment by apply: refused, saying how a key moves; the key stays live everywhere and nothing is announced', async () => {
    await h.apply([serverKey('mover', 'alpha-live')]);
    const key = h.serverKeys.mover;
    await cachedAsGoodByBoth(key);
    await announced();

    await expect(h.apply([serverKey('mover', 'alpha-test')])).rejects.toThrow(
      `test#1 ServerKey ${NAMESPACE}/mover: spec.environment is immutable: it names an identity; a key does not move: create a ServerKey in the other environment, deploy its key, then delete this one (it is "alpha-live")`,
    );
    expect(await announced()).toEqual([]);
    const rows = await h.db('server_keys').where({ manifest_name: 'mover' });
    expect(rows.map((r) => [r.key_id, Number(r.environment_id), r.revoked_at])).toEqual([[keyIdOf(key), await environmentId('alpha-live'), null]]);
    expect((await flags(h.base, key)).status).toBe(200);
    expect((await flags(other.base, key)).status).toBe(200);
  });

  test("the move as documented, into an environment at its plan's limit: the new key is refused, the old one stays live", async () => {
    await h.apply([serverKey('stayer', 'alpha-live')]);
    const key = h.serverKeys.stayer;
    await cachedAsGoodByBoth(key);
    await announced();

    await expect(h.apply([serverKey('stayer-full', 'full-live')])).rejects.toThrow(
      `test#1 ServerKey ${NAMESPACE}/stayer-full: spec.environment This environment already has 1 live server keys, the most its plan allows.`,
    );
    expect(await announced()).toEqual([]);
    expect(await h.db('server_keys').where({ manifest_name: 'stayer-full' })).toEqual([]);
    expect((await flags(h.base, key)).status).toBe(200);
    expect((await flags(other.base, key)).status).toBe(200);
  });

  test('removed (the operator deleting it, on the pool outside any apply): revoked everywhere at once; removing again finds nothing', async () => {
    await h.apply([serverKey('doomed', 'alpha-live')]);
    const key = h.serverKeys.doomed;
    await cachedAsGoodByBoth(key);
    await announced();

    expect(await removeManifest(h.db, { kind: 'ServerKey', namespace: NAMESPACE, name: 'doomed' }, h.core.bus)).toEqual({
      kind: 'ServerKey',
      namespace: NAMESPACE,
      name: 'doomed',
      action: 'removed',
    });
    expectError(await flags(h.base, key), 401, 'unauthorized');
    await refusedByTheOtherWithinMoments(key);
    expect(await announced()).toEqual([{ kind: 'server-key', keyId: keyIdOf(key) }]);

    expect((await removeManifest(h.db, { kind: 'ServerKey', namespace: NAMESPACE, name: 'doomed' }, h.core.bus)).action).toBe('absent');
    expect(await announced()).toEqual([]);
    // Applied again, the document stands for a new key.
    await h.apply([serverKey('doomed', 'alpha-live')]);
    expect(keyIdOf(h.serverKeys.doomed)).not.toBe(keyIdOf(key));
    expect((await flags(other.base, h.serverKeys.doomed)).status).toBe(200);
  });
});

describe('GameConfig', () => {
  const readerKey = () => h.serverKeys['alpha-live-key'];

  /** The other process's ETag for /flags, with its content version cached (it answers 304 to it). */
  async function cachedEtagOfTheOther(): Promise<string> {
    const first = await flags(other.base, readerKey());
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect((await flags(other.base, readerKey(), etag)).status).toBe(304);
    return etag;
  }

  async function answeredAnewByTheOther(etag: string) {
    let reply = await flags(other.base, readerKey(), etag);
    const tookMs = await eventually(async () => {
      reply = await flags(other.base, readerKey(), etag);
      return reply.status === 200;
    }, PUSHED_WITHIN_MS);
    expect(tookMs).toBeLessThan(PUSHED_WITHIN_MS);
    expect(reply.headers.get('etag')).not.toBe(etag);
    return reply;
  }

  test('applied: another process answers the new flags, under a new ETag, at once', async () => {
    const etag = await cachedEtagOfTheOther();
    await announced();
    await h.apply([gameConfig('live-flags', { environment: 'alpha-live', flags: [{ name: 'winter', enabled: true }] })]);
    const reply = await answeredAnewByTheOther(etag);
    expect(reply.body.items).toEqual([{ name: 'winter', isEnabled: true }]);
    // Content changes announce the one environment's content, not every environment.
    expect(await announced()).toEqual([{ kind: 'content', environmentId: await environmentId('alpha-live') }]);

    // The same again changes nothing and announces nothing: the ETag stays.
    const again = await flags(other.base, readerKey());
    await h.apply([gameConfig('live-flags', { environment: 'alpha-live', flags: [{ name: 'winter', enabled: true }] })]);
    expect(await announced()).toEqual([]);
    expect((await flags(other.base, readerKey(), again.headers.get('etag')!)).status).toBe(304);
  });

  test('reconciled on the pool (as the operator will), then removed: each change reaches another process at once', async () => {
    const doc = validateManifest(gameConfig('pool-flags', { environment: 'alpha-live', flags: [{ name: 'spring', enabled: false }] }));
    let etag = await cachedEtagOfTheOther();
    expect(await reconcileManifest(h.db, doc, h.core.bus)).toEqual({ kind: 'GameConfig', namespace: NAMESPACE, name: 'pool-flags', action: 'created' });
    expect((await answeredAnewByTheOther(etag)).body.items).toContainEqual({ name: 'spring', isEnabled: false });

    etag = await cachedEtagOfTheOther();
    expect((await removeManifest(h.db, { kind: 'GameConfig', namespace: NAMESPACE, name: 'pool-flags' }, h.core.bus)).action).toBe('removed');
    const reply = await answeredAnewByTheOther(etag);
    expect(reply.body.items.map((f: { name: string }) => f.name)).not.toContain('spring');
    expect(await h.db('flags').where({ owner: `${NAMESPACE}/pool-flags` })).toEqual([]);

    await announced();
    expect((await removeManifest(h.db, { kind: 'GameConfig', namespace: NAMESPACE, name: 'pool-flags' }, h.core.bus)).action).toBe('absent');
    expect(await announced()).toEqual([]);
  });
});

describe('announcements', () => {
  test('a batch announces each change once, after the commit; a refused batch announces nothing', async () => {
    await announced();
    await h.apply([plan('batch-plan'), project('batch', { plan: 'batch-plan' }), environment('batch-a', 'batch'), environment('batch-b', 'batch')]);
    expect(await announced()).toEqual([{ kind: 'environments' }]);

    await expect(
      h.apply([plan('batch-plan', { licenceSeats: 3 }), environment('batch-c', 'batch'), environment('batch-d', 'no-such-project')]),
    ).rejects.toThrow('spec.project names project "no-such-project"');
    expect(await announced()).toEqual([]);
    expect(await h.db('environments').where({ name: 'batch-c' }).first()).toBeUndefined();
    expect((await h.db('plans').where({ name: 'batch-plan' }).first()).spec.licenceSeats).toBe(2);
  });

  test('announceAfterCommit: on the pool at once; in a transaction after its commit, each event once; after a rollback never', async () => {
    const coordination = new MemoryCoordination();
    const bus = new InvalidationBus(coordination);
    const told: Invalidation[] = [];
    bus.on((event) => told.push(event));

    await announceAfterCommit(h.db, bus, { kind: 'content', environmentId: 1 });
    expect(told).toEqual([{ kind: 'content', environmentId: 1 }]);

    told.length = 0;
    await inTransaction(h.db, async (trx) => {
      await announceAfterCommit(trx, bus, { kind: 'environments' });
      await inTransaction(trx, (joined) => announceAfterCommit(joined, bus, { kind: 'environments' }));
      await announceAfterCommit(trx, bus, { kind: 'content', environmentId: 1 });
      await announceAfterCommit(trx, bus, { kind: 'content', environmentId: 2 });
      expect(told).toEqual([]);
    });
    expect(told).toEqual([{ kind: 'environments' }, { kind: 'content', environmentId: 1 }, { kind: 'content', environmentId: 2 }]);

    told.length = 0;
    await expect(
      inTransaction(h.db, async (trx) => {
        await announceAfterCommit(trx, bus, { kind: 'environments' });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(told).toEqual([]);
    await coordination.close();
  });
});

test('every kind is cleaned up on deletion', () => {
  // Plans, projects and environments are retired, not deleted (test/core/environment-retirement.test.ts, below).
  expect((Object.keys(MANIFEST_KINDS) as ManifestKind[]).filter((kind) => !isRemovable(kind))).toEqual([]);
});

describe('a deleted Plan', () => {
  test('is refused while a live project is on it, naming the projects; its row stays as it was', async () => {
    const project = await h.db('projects').whereNull('retired_at').first();
    await expect(removeManifest(h.db, { kind: 'Plan', name: project.plan_name }, h.core.bus)).rejects.toThrow(
      new RegExp(`Plan ${project.plan_name} is still the plan of live projects \\(.*${NAMESPACE}/${project.name}`),
    );
    expect((await h.db('plans').where({ name: project.plan_name }).first()).retired_at).toBeNull();
  });

  test('is retired: no project can be put on it, the cluster and the database agree; applied again, it is back', async () => {
    await reconcileManifest(h.db, validateManifest(plan('ghost-plan')), h.core.bus);
    expect(await removeManifest(h.db, { kind: 'Plan', name: 'ghost-plan' }, h.core.bus)).toMatchObject({ action: 'removed' });
    expect(await removeManifest(h.db, { kind: 'Plan', name: 'ghost-plan' }, h.core.bus)).toMatchObject({ action: 'absent' });
    await expect(reconcileManifest(h.db, validateManifest(project('ghost-project', { plan: 'ghost-plan' })), h.core.bus)).rejects.toMatchObject({
      field: 'spec.plan',
      code: 'not-found',
      reason: 'names plan "ghost-plan", which was deleted (apply that Plan again to bring it back)',
    });
    expect(await h.db('projects').where({ name: 'ghost-project' }).first()).toBeUndefined();
    expect(await reconcileManifest(h.db, validateManifest(plan('ghost-plan')), h.core.bus)).toMatchObject({ action: 'created' });
    expect(await reconcileManifest(h.db, validateManifest(project('ghost-project', { plan: 'ghost-plan' })), h.core.bus)).toMatchObject({ action: 'created' });
  });
});
