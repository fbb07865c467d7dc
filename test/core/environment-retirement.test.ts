/**
 * Deleting a GameEnvironment document (the operator's finalizer calls removeManifest) retires the
 * environment: its app key answers as an unknown one, its players' tokens and its server keys are
 * refused by every running process at once (pushed, well before any cache expires), its realtime
 * sockets close, and its players' data stays. Applying the document again brings it all back. A
 * Project is retired only once it has no live environment. Real PostgreSQL, Redis, HTTP and sockets.
 */
import { ManifestError, reconcileManifest, removeManifest, validateManifest, type AnyManifest } from '@hearth/core/manifests';
import { type ApiInstance, type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { NAMESPACE, environment, project, serverKey, standardManifests } from '../support/manifests';
import { eventually } from '../support/wait';
import { Client, type RealtimeInstance, startRealtime } from '../realtime/support';

/** The registry caches an environment for 10 s, the verifier a key for 5 s: a push must beat both by far. */
const PUSHED_WITHIN_MS = 1500;

let h: Harness;
let other: ApiInstance;
let rt: RealtimeInstance;
const clients: Client[] = [];

beforeAll(async () => {
  h = await startHarness({
    manifests: [...standardManifests(), project('doomed'), environment('doomed-live', 'doomed'), serverKey('doomed-live-key', 'doomed-live')],
  });
  other = await h.startAnotherApi();
  rt = await startRealtime(h);
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  await rt?.stop();
  await h?.close();
});

const ref = (kind: 'GameEnvironment' | 'Project', name: string) => ({ kind, namespace: NAMESPACE, name });

async function reconcile(doc: AnyManifest) {
  return reconcileManifest(h.db, validateManifest(JSON.parse(JSON.stringify(doc)), 'test#1'), h.core.bus, 'test#1');
}

/** What a player token and a server key get from an API process (a read each credential may make). */
async function answers(base: string, playerToken: string, key: string, playerId: string) {
  const asPlayer = await call(base, 'GET', '/players/me/data/slot.1', { token: playerToken });
  const asServer = await call(base, 'GET', `/players/${playerId}`, { token: key });
  return { player: asPlayer, server: asServer };
}

const idpSignIn = (base: string, appKey: string) => call(base, 'POST', '/auth/idp', { body: { appKey, idToken: 'not.a.token' } });

test('a deleted GameEnvironment is retired: refused everywhere at once, its sockets closed, its data kept; applied again, it is back', async () => {
  const key = h.serverKeys['doomed-live-key'];
  const { accessToken, player } = await signIn(h.base, key, 'keeper');
  expect((await call(h.base, 'PUT', '/players/me/data/slot.1', { token: accessToken, body: { data: { gold: 120 } } })).status).toBe(201);
  // Both API processes now hold the environment, the key and the player in their caches.
  for (const base of [h.base, other.base]) {
    const before = await answers(base, accessToken, key, player.id);
    expect([before.player.status, before.server.status]).toEqual([200, 200]);
    expect(before.player.body.data).toEqual({ gold: 120 });
  }
  // A live environment without the identity provider: the app key is known, the provider is not set up.
  expectError(await idpSignIn(other.base, 'doomed-live'), 403, 'provider-disabled');
  const socket = await Client.authorized(rt.url, accessToken);
  clients.push(socket);

  expect(await removeManifest(h.db, ref('GameEnvironment', 'doomed-live'), h.core.bus)).toEqual({
    kind: 'GameEnvironment',
    namespace: NAMESPACE,
    name: 'doomed-live',
    action: 'removed',
  });

  // The announcing process drops its copies before removeManifest answers; the others within moments.
  const here = await answers(h.base, accessToken, key, player.id);
  expectError(here.player, 401, 'unauthorized');
  expectError(here.server, 401, 'unauthorized');
  const took = await eventually(async () => {
    const there = await answers(other.base, accessToken, key, player.id);
    return there.player.status === 401 && there.server.status === 401;
  }, PUSHED_WITHIN_MS);
  expect(took).toBeLessThan(PUSHED_WITHIN_MS);
  const there = await answers(other.base, accessToken, key, player.id);
  expectError(there.player, 401, 'unauthorized');
  expectError(there.server, 401, 'unauthorized');
  // Sign-in answers as for an app key no environment has (spec: service-disabled).
  expectError(await idpSignIn(other.base, 'doomed-live'), 403, 'service-disabled');
  expectError(await idpSignIn(other.base, 'no-such-app-key'), 403, 'service-disabled');
  // A running socket of the environment is told and closed.
  expect(await socket.next()).toEqual({ v: 1, type: 'error', payload: { error: 'unauthorized', message: expect.any(String) } });
  expect(await socket.waitClosed()).toEqual({ code: 4401, reason: 'environment-retired' });
  // A new socket with the same token is refused.
  const late = await Client.open(rt.url);
  clients.push(late);
  late.send({ v: 1, type: 'authorize', id: 'a', payload: { token: accessToken } });
  expect((await late.next()).payload.error).toBe('unauthorized');
  expect((await late.waitClosed()).code).toBe(4401);
  // Other environments are untouched.
  const alpha = await signIn(other.base, h.serverKeys['alpha-live-key'], 'bystander');
  expect((await call(other.base, 'GET', '/players/me/data', { token: alpha.accessToken })).status).toBe(200);

  // Nothing of the environment's data went: the row (retired), the player, the save, the key (not revoked).
  const row = await h.db('environments').where({ namespace: NAMESPACE, name: 'doomed-live' }).first();
  expect(row).toMatchObject({ app_key: 'doomed-live', retired_at: expect.any(Date) });
  expect(await h.db('players').where({ id: player.id, environment_id: row.id }).first()).toBeDefined();
  expect(await h.db('player_saves').where({ player_id: player.id, key: 'slot.1' }).first()).toBeDefined();
  expect(await h.db('server_keys').where({ environment_id: row.id, manifest_name: 'doomed-live-key' }).first()).toMatchObject({ revoked_at: null });

  // A second delete finds nothing to do.
  expect((await removeManifest(h.db, ref('GameEnvironment', 'doomed-live'), h.core.bus)).action).toBe('absent');
  // Documents cannot point at a retired environment.
  await expect(reconcile(serverKey('doomed-live-key-2', 'doomed-live'))).rejects.toMatchObject({ field: 'spec.environment' });

  // Applied again: the same environment (same id), and everything works again on every process at once.
  expect((await reconcile(environment('doomed-live', 'doomed'))).action).toBe('created');
  expect((await h.db('environments').where({ namespace: NAMESPACE, name: 'doomed-live' }).first()).id).toBe(row.id);
  await eventually(async () => (await answers(other.base, accessToken, key, player.id)).server.status === 200, PUSHED_WITHIN_MS);
  const back = await answers(other.base, accessToken, key, player.id);
  expect([back.player.status, back.server.status]).toEqual([200, 200]);
  expect(back.player.body.data).toEqual({ gold: 120 });
  expectError(await idpSignIn(other.base, 'doomed-live'), 403, 'provider-disabled');
  clients.push(await Client.authorized(rt.url, accessToken));
  expect((await reconcile(environment('doomed-live', 'doomed'))).action).toBe('unchanged');
});

test('a retired app key stays reserved for its environment: another asking for it is refused naming the field', async () => {
  await reconcile(environment('reserved-live', 'alpha', 'reserved-key'));
  expect((await removeManifest(h.db, ref('GameEnvironment', 'reserved-live'), h.core.bus)).action).toBe('removed');

  const refused = await reconcile(environment('squatter', 'alpha', 'reserved-key')).catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(ManifestError);
  expect(refused).toMatchObject({ field: 'spec.appKey', reason: expect.stringContaining(`retired GameEnvironment ${NAMESPACE}/reserved-live`) });
  expect(await h.db('environments').where({ namespace: NAMESPACE, name: 'squatter' }).first()).toBeUndefined();

  // Back under its own name, it may keep the key (or change it: then the old one is free again).
  expect((await reconcile(environment('reserved-live', 'alpha', 'reserved-key'))).action).toBe('created');
});

test('a Project is retired only once its environments are; applied again, it is back and may hold them again', async () => {
  await reconcile(project('brief'));
  await reconcile(environment('brief-live', 'brief'));

  // One deleted file must not take a game down: a project with a live environment is refused, untouched.
  const refused = await removeManifest(h.db, ref('Project', 'brief'), h.core.bus).catch((err: unknown) => err);
  expect(refused).toMatchObject({ code: 'conflict', message: expect.stringContaining('brief-live'), details: { environments: ['brief-live'] } });
  expect(await h.db('projects').where({ namespace: NAMESPACE, name: 'brief' }).first()).toMatchObject({ retired_at: null });

  // As a namespace's deletion goes: the environment first, then the project.
  expect((await removeManifest(h.db, ref('GameEnvironment', 'brief-live'), h.core.bus)).action).toBe('removed');
  expect((await removeManifest(h.db, ref('Project', 'brief'), h.core.bus)).action).toBe('removed');
  expect((await removeManifest(h.db, ref('Project', 'brief'), h.core.bus)).action).toBe('absent');
  expect(await h.db('projects').where({ namespace: NAMESPACE, name: 'brief' }).first()).toMatchObject({ retired_at: expect.any(Date) });

  // Its environment cannot come back under a retired project; the project first, then the environment.
  await expect(reconcile(environment('brief-live', 'brief'))).rejects.toMatchObject({ field: 'spec.project' });
  expect((await reconcile(project('brief'))).action).toBe('created');
  expect((await reconcile(project('brief'))).action).toBe('unchanged');
  expect((await reconcile(environment('brief-live', 'brief'))).action).toBe('created');
  expect(await h.core.environments.byAppKey('brief-live')).toMatchObject({ name: 'brief-live', project: { name: 'brief' } });
});

test('an environment load that began before an announcement is not remembered (it may have read a just-retired row)', async () => {
  const registry = h.core.environments;
  await h.core.bus.announce({ kind: 'environments' });
  const loading = registry.byAppKey('alpha-test');
  // Announced while the load is in flight (the bus drops this process's copies synchronously).
  await h.core.bus.announce({ kind: 'environments' });
  expect(await loading).toMatchObject({ appKey: 'alpha-test' });
  expect(registry.peekByAppKey('alpha-test')).toBeUndefined();
  // A load begun after it is remembered as usual. (Another announcement still on its way through
  // Redis, from this file's earlier changes, may land during one load on a loaded machine and forget
  // that one too: a load after the last of them is remembered.)
  await eventually(async () => {
    await registry.byAppKey('alpha-test');
    return registry.peekByAppKey('alpha-test') !== undefined;
  }, 5_000);
  expect(registry.peekByAppKey('alpha-test')).toMatchObject({ appKey: 'alpha-test' });
});
