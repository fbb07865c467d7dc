/**
 * `hearth operator` against a real kube-apiserver with the generated CRDs, a fresh database and the
 * API beside it (startHarness): an SRE's path with kubectl, end to end. What it checks is what the
 * operator promises: database rows, the ServerKey's Secret (its key works on the API), status
 * conditions and observedGeneration, refusals as Ready=False with a Warning Event (then fixed),
 * finalizers on deletion (a revoked key is refused), a minted key never lost when its Secret cannot
 * be written, and a GameConfig edit felt by the API within seconds.
 */
import type { Harness } from '../support/harness';
import { call, expectError } from '../support/http';
import type { Kube } from '../support/kube';
import { NAMESPACE, cardType, environment, gameConfig, licenceKey, plan, project, serverKey, skillTree } from '../support/manifests';
import { type OperatorProcess, getJson, getOrNull, kubectl, kubectlApply, metricsOf, readyOf, waitReady, waitUntil } from './operator-process';
import { type OperatorWorld, startOperatorWorld } from './world';

jest.setTimeout(90_000);

let kube: Kube;
let h: Harness;
let operator: OperatorProcess;

/** How many times the operator's log says it reconciled this object (its JSON lines' `reconciled`). */
function reconcilesOf(kind: string, name: string): number {
  let count = 0;
  for (const line of operator.log().split('\n')) {
    if (!line.includes('"reconciled"')) continue;
    const entry = JSON.parse(line) as { msg?: string; kind?: string; key?: string };
    if (entry.msg === 'reconciled' && entry.kind === kind && entry.key === `${NAMESPACE}/${name}`) count++;
  }
  return count;
}

let world: OperatorWorld | undefined;
beforeAll(async () => {
  world = await startOperatorWorld();
  ({ kube, h, operator } = world);
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

const ns = (kind: string, name: string) => [kind, name, '-n', NAMESPACE];

async function secretKey(name: string): Promise<{ key: string; keyId: string; secret: any }> {
  const secret = await getJson(kube, ['secret', name, '-n', NAMESPACE]);
  const decode = (v: string | undefined) => (v === undefined ? '' : Buffer.from(v, 'base64').toString('utf8'));
  return { key: decode(secret.data.key), keyId: decode(secret.data.keyId), secret };
}

async function eventsOf(name: string, namespace = NAMESPACE): Promise<{ type: string; reason: string; message: string }[]> {
  const list = await getJson(kube, ['events', '-n', namespace, '--field-selector', `involvedObject.name=${name}`]);
  return list.items;
}

describe('an SRE creates a plan, project, environment, key and config with kubectl', () => {
  test('each is in the database and Ready; the key is in its Secret and works on the API', async () => {
    await kubectlApply(kube, [
      plan('op-plan', { serverKeysPerEnvironment: 2 }),
      project('op-project', { plan: 'op-plan' }),
      environment('op-live', 'op-project', 'op-live-app'),
      serverKey('op-key', 'op-live'),
      gameConfig('op-config', { environment: 'op-live', flags: [{ name: 'new_shop', enabled: false }] }),
    ]);
    const planObj = await waitReady(kube, ['plan', 'op-plan']);
    expect(readyOf(planObj)).toMatchObject({ status: 'True', reason: 'Reconciled', observedGeneration: 1 });
    expect(planObj.status.observedGeneration).toBe(1);
    expect(planObj.metadata.finalizers).toContain('hearth.gg/cleanup'); // a deleted Plan is retired (test/operator/operability.test.ts)
    await waitReady(kube, ns('project', 'op-project'));
    await waitReady(kube, ns('gameenvironment', 'op-live'));
    const keyObj = await waitReady(kube, ns('serverkey', 'op-key'));
    await waitReady(kube, ns('gameconfig', 'op-config'));

    expect(await h.db('plans').where({ name: 'op-plan' }).first()).toMatchObject({ name: 'op-plan' });
    expect(await h.db('projects').where({ namespace: NAMESPACE, name: 'op-project' }).first()).toBeTruthy();
    const env = await h.db('environments').where({ namespace: NAMESPACE, name: 'op-live' }).first();
    expect(env.app_key).toBe('op-live-app');

    // The key: its id and Secret in status, the whole key only in the Secret, which the ServerKey owns.
    expect(keyObj.metadata.finalizers).toContain('hearth.gg/cleanup');
    expect(keyObj.status.secretName).toBe('op-key-server-key');
    const { key, keyId, secret } = await secretKey('op-key-server-key');
    expect(keyObj.status.keyId).toBe(keyId);
    expect(key.startsWith(`hsk_${keyId}`)).toBe(true);
    expect(JSON.stringify(keyObj)).not.toContain(key);
    expect(operator.log()).not.toContain(key);
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'ServerKey', name: 'op-key', uid: keyObj.metadata.uid, controller: true }),
    ]);
    const rows = await h.db('server_keys').where({ key_id: keyId });
    expect(rows).toHaveLength(1);
    expect(rows[0].revoked_at).toBeNull();
    const flags = await call(h.base, 'GET', '/flags', { token: key });
    expect(flags.status).toBe(200);
    expect(flags.body.items).toEqual([{ name: 'new_shop', isEnabled: false }]);
    expect((await eventsOf('op-key')).map((e) => e.reason)).toContain('KeyMinted');

    // A second reconcile (the relist, a restart) mints nothing new.
    const reconcilesBefore = reconcilesOf('ServerKey', 'op-key');
    await kubectl(kube, ['annotate', ...ns('serverkey', 'op-key'), 'touched=1']);
    // The annotation's event reaches the operator and it reconciles the key once more: then nothing new.
    await waitUntil('a second reconcile of op-key', async () => (reconcilesOf('ServerKey', 'op-key') > reconcilesBefore ? true : undefined));
    expect(await h.db('server_keys').where({ environment_id: env.id })).toHaveLength(1);
    expect((await secretKey('op-key-server-key')).key).toBe(key);
  });

  test('an update is reconciled and its generation observed', async () => {
    await kubectlApply(kube, [project('op-project', { plan: 'op-plan', sessionSeats: 4 })]);
    const obj = await waitReady(kube, ns('project', 'op-project'));
    expect(obj.metadata.generation).toBe(2);
    expect(obj.status.observedGeneration).toBe(2);
    expect(readyOf(obj)!.observedGeneration).toBe(2);
    const row = await h.db('projects').where({ namespace: NAMESPACE, name: 'op-project' }).first();
    expect(row.spec.sessionSeats).toBe(4);
  });

  test('a GameConfig edited with kubectl changes what GET /flags answers (a new ETag) within seconds', async () => {
    const { key } = await secretKey('op-key-server-key');
    const before = await call(h.base, 'GET', '/flags', { token: key });
    const etag = before.headers.get('etag');
    expect(etag).toBeTruthy();
    await kubectlApply(kube, [gameConfig('op-config', { environment: 'op-live', flags: [{ name: 'new_shop', enabled: true }] })]);
    const tookMs = Date.now();
    const after = await waitUntil(
      'GET /flags shows the edit',
      async () => {
        const reply = await call(h.base, 'GET', '/flags', { token: key, headers: { 'If-None-Match': etag! } });
        return reply.status === 200 ? reply : undefined;
      },
      10_000,
      100,
    );
    expect(Date.now() - tookMs).toBeLessThan(10_000);
    expect(after.body.items).toEqual([{ name: 'new_shop', isEnabled: true }]);
    expect(after.headers.get('etag')).not.toBe(etag);
  });
});

describe('refusals an SRE must see', () => {
  test('a project naming a missing plan is Ready=False with a Warning Event, and Ready once the plan exists', async () => {
    await kubectlApply(kube, [project('op-orphan', { plan: 'op-later' })]);
    const obj = await waitReady(kube, ns('project', 'op-orphan'), 'False');
    expect(readyOf(obj)).toMatchObject({ status: 'False', reason: 'MissingReference', message: expect.stringContaining('spec.plan') });
    expect(readyOf(obj)!.message).toContain('op-later');
    const warning = await waitUntil('a Warning event', async () => (await eventsOf('op-orphan')).find((e) => e.type === 'Warning'));
    expect(warning).toMatchObject({ reason: 'MissingReference', message: expect.stringContaining('op-later') });
    expect(await h.db('projects').where({ namespace: NAMESPACE, name: 'op-orphan' }).first()).toBeUndefined();
    expect(operator.child.exitCode).toBeNull(); // no crash loop
    // Counted while it lasts (not only when it was refused), for the HearthObjectsNotReady alert.
    expect(await metricsOf(operator)).toMatch(/^hearth_operator_objects_not_ready\{kind="Project",reason="MissingReference"\} 1$/m);

    // Fixed by creating what it names (the project itself is not touched).
    await kubectlApply(kube, [plan('op-later')]);
    const fixed = await waitReady(kube, ns('project', 'op-orphan'), 'True', 15_000);
    expect(readyOf(fixed)!.reason).toBe('Reconciled');
    expect(await h.db('projects').where({ namespace: NAMESPACE, name: 'op-orphan' }).first()).toBeTruthy();
    expect(await metricsOf(operator)).not.toMatch(/^hearth_operator_objects_not_ready\{kind="Project",reason="MissingReference"\} [1-9]/m);
  });

  test('a SkillTree whose parents form a cycle (what CEL cannot see) is Ready=False (InvalidSpec) naming the field, and Ready once fixed', async () => {
    const tree = (nodes: unknown[]) => skillTree('op-tree', { environment: 'op-live', name: 'Tree', nodes });
    await kubectlApply(kube, [
      tree([
        { key: 'op.a', name: 'A', parents: ['op.b'] },
        { key: 'op.b', name: 'B', parents: ['op.a'] },
      ]),
    ]);
    const obj = await waitReady(kube, ns('skilltree', 'op-tree'), 'False');
    expect(readyOf(obj)).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: expect.stringContaining('spec.nodes.0.parents') });
    expect(readyOf(obj)!.message).toContain('cycle');
    expect(await h.db('skill_nodes').whereIn('key', ['op.a', 'op.b'])).toEqual([]);
    await kubectlApply(kube, [
      tree([
        { key: 'op.a', name: 'A' },
        { key: 'op.b', name: 'B', parents: ['op.a'] },
      ]),
    ]);
    await waitReady(kube, ns('skilltree', 'op-tree'), 'True', 15_000);
    expect((await h.db('skill_nodes').whereIn('key', ['op.a', 'op.b']).orderBy('key')).map((n) => [n.key, n.parents])).toEqual([
      ['op.a', []],
      ['op.b', ['op.a']],
    ]);
  });

  test("a key past the plan's limit is Ready=False (PlanLimit) with a Warning Event, and no key or Secret is made", async () => {
    // op-plan allows two live keys; op-key holds one.
    await kubectlApply(kube, [serverKey('op-key-2', 'op-live'), serverKey('op-key-3', 'op-live')]);
    const [two, three] = await Promise.all([
      waitUntil('both settled', async () => {
        const o = await getOrNull(kube, ns('serverkey', 'op-key-2'));
        return readyOf(o)?.status === 'True' || readyOf(o)?.status === 'False' ? o : undefined;
      }),
      waitUntil('both settled', async () => {
        const o = await getOrNull(kube, ns('serverkey', 'op-key-3'));
        return readyOf(o)?.status === 'True' || readyOf(o)?.status === 'False' ? o : undefined;
      }),
    ]);
    const refused = [two, three].filter((o) => readyOf(o)!.status === 'False');
    expect(refused).toHaveLength(1);
    const name = refused[0].metadata.name;
    expect(readyOf(refused[0])).toMatchObject({ reason: 'PlanLimit', message: expect.stringContaining('plan') });
    expect(refused[0].status.keyId).toBeUndefined();
    expect(await getOrNull(kube, ['secret', `${name}-server-key`, '-n', NAMESPACE])).toBeNull();
    const warning = await waitUntil('a Warning event', async () => (await eventsOf(name)).find((e) => e.type === 'Warning'));
    expect(warning.reason).toBe('PlanLimit');
    expect(await metricsOf(operator)).toMatch(/hearth_operator_reconciles_total\{kind="ServerKey",outcome="refused"\} [1-9]/);
    expect(await metricsOf(operator)).toMatch(/^hearth_operator_objects_not_ready\{kind="ServerKey",reason="PlanLimit"\} 1$/m);
  });

  test('a Secret that cannot be written rolls the mint back: no key is live that nobody can read', async () => {
    // A Secret of the same name that is not the ServerKey's: the operator will not overwrite it.
    await kubectl(kube, ['create', 'secret', 'generic', 'op-blocked-server-key', '-n', NAMESPACE, '--from-literal=key=someone-elses']);
    await kubectlApply(kube, [
      plan('op-roomy', { serverKeysPerEnvironment: 5 }),
      project('op-p2', { plan: 'op-roomy' }),
      environment('op-env2', 'op-p2', 'op-env2-app'),
    ]);
    await waitReady(kube, ns('gameenvironment', 'op-env2'));
    await kubectlApply(kube, [serverKey('op-blocked', 'op-env2')]);
    const obj = await waitReady(kube, ns('serverkey', 'op-blocked'), 'False');
    expect(readyOf(obj)!.reason).toBe('SecretConflict');
    const env2 = await h.db('environments').where({ namespace: NAMESPACE, name: 'op-env2' }).first();
    expect(await h.db('server_keys').where({ environment_id: env2.id })).toHaveLength(0); // minted, then rolled back
    expect((await secretKey('op-blocked-server-key')).key).toBe('someone-elses');

    await kubectl(kube, ['delete', 'secret', 'op-blocked-server-key', '-n', NAMESPACE]);
    await kubectl(kube, ['annotate', ...ns('serverkey', 'op-blocked'), 'retry=now']);
    const ready = await waitReady(kube, ns('serverkey', 'op-blocked'), 'True', 20_000);
    const { keyId } = await secretKey('op-blocked-server-key');
    expect(ready.status.keyId).toBe(keyId);
    expect(await h.db('server_keys').where({ environment_id: env2.id }).whereNull('revoked_at')).toHaveLength(1);
  });
});

describe('a LicenceKey', () => {
  test('its key is in a Secret it owns and works on the licence routes; deleted, it is revoked', async () => {
    await kubectlApply(kube, [licenceKey('op-licence', 'op-project')]);
    const obj = await waitReady(kube, ns('licencekey', 'op-licence'));
    expect(obj.status.secretName).toBe('op-licence-licence-key');
    const { key, keyId, secret } = await secretKey('op-licence-licence-key');
    expect(obj.status.keyId).toBe(keyId);
    expect(key.startsWith(`hlk_${keyId}_`)).toBe(true);
    expect(JSON.stringify(obj)).not.toContain(key);
    expect(operator.log()).not.toContain(key);
    expect(secret.metadata.labels).toMatchObject({ 'hearth.gg/licence-key': 'op-licence' });
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'LicenceKey', name: 'op-licence', uid: obj.metadata.uid, controller: true }),
    ]);
    const release = () => call(h.base, 'POST', '/licence/release', { token: key, body: { machineId: 'op-machine' } });
    expect((await release()).status).toBe(204);

    await kubectl(kube, ['delete', ...ns('licencekey', 'op-licence'), '--timeout=20s']);
    expect(await getOrNull(kube, ns('licencekey', 'op-licence'))).toBeNull();
    expect((await h.db('licence_keys').where({ key_id: keyId }).first()).revoked_at).not.toBeNull();
    expectError(await release(), 401, 'unauthorized');
  });
});

describe('deleting resources', () => {
  test('a deleted ServerKey is revoked (the API refuses it) before Kubernetes lets it go', async () => {
    const { key, keyId } = await secretKey('op-key-server-key');
    expect((await call(h.base, 'GET', '/flags', { token: key })).status).toBe(200);
    await kubectl(kube, ['delete', ...ns('serverkey', 'op-key'), '--timeout=20s']);
    expect(await getOrNull(kube, ns('serverkey', 'op-key'))).toBeNull();
    const row = await h.db('server_keys').where({ key_id: keyId }).first();
    expect(row.revoked_at).not.toBeNull();
    expectError(await call(h.base, 'GET', '/flags', { token: key }), 401, 'unauthorized');
  });

  test('a CardType is reconciled into the card types the API lists, and taken out when deleted', async () => {
    await kubectlApply(kube, [cardType('op-archer', { environment: 'op-live', slug: 'archer', name: 'Archer', perDeckLimit: 2 })]);
    expect(readyOf(await waitReady(kube, ns('cardtype', 'op-archer')))).toMatchObject({ status: 'True', reason: 'Reconciled' });
    const env = await h.db('environments').where({ namespace: NAMESPACE, name: 'op-live' }).first();
    expect(await h.db('card_types').where({ environment_id: env.id }).select('key', 'per_deck_limit')).toEqual([{ key: 'archer', per_deck_limit: 2 }]);
    await kubectl(kube, ['delete', ...ns('cardtype', 'op-archer'), '--timeout=20s']);
    expect(await h.db('card_types').where({ environment_id: env.id })).toHaveLength(0);
  });

  test('a deleted GameConfig takes its flags out of the database', async () => {
    const env = await h.db('environments').where({ namespace: NAMESPACE, name: 'op-live' }).first();
    expect(await h.db('flags').where({ environment_id: env.id })).toHaveLength(1);
    await kubectl(kube, ['delete', ...ns('gameconfig', 'op-config'), '--timeout=20s']);
    expect(await getOrNull(kube, ns('gameconfig', 'op-config'))).toBeNull();
    expect(await h.db('flags').where({ environment_id: env.id })).toHaveLength(0);
  });
});
