/**
 * The Secrets the operator owns and the Secrets it reads, on a real kube-apiserver, with the default
 * relist (300 s): whatever follows within seconds is the Secret watches' doing.
 *
 * Owned key Secrets: watched by their label, so a deleted Secret shows on its ServerKey within
 * seconds; protected by the finalizer hearth.gg/key-secret, so `kubectl delete secret` of a live key
 * leaves it Terminating and the key working (status SecretDeleted), while a Secret really gone (its
 * finalizer taken off by hand) is SecretMissing; the finalizer comes off when the ServerKey itself is
 * deleted, and an older Secret without it gets it.
 *
 * Secrets a Project names (the confused deputy of docs/kubernetes.md "Secrets the operator reads"):
 * the operator may get every Secret of a watched namespace, so it reads only a Secret labelled
 * `hearth.gg/secret-for: <project>`. This is the attack case for that rule: test/security has no
 * Kubernetes API server, and the operator is what is attacked, so it lives with the operator suites.
 * A Project naming the master key's Secret, or the database URL's, is refused (SecretNotOptedIn) and
 * nothing of either Secret reaches the database, a status, an Event or the log; a Secret labelled for
 * another Project is refused too; labelled for this one, it is carried within seconds.
 */
import { randomBytes } from 'node:crypto';
import type { Harness } from '../support/harness';
import type { Kube } from '../support/kube';
import { call, expectError } from '../support/http';
import { reportFigure } from '../support/figures';
import { NAMESPACE, environment, plan, project, serverKey } from '../support/manifests';
import { dashboardSettings } from '../support/dashboards';
import { type OperatorWorld, startOperatorWorld } from './world';
import { type OperatorProcess, getJson, getOrNull, kubectl, kubectlApply, projectSecret, readyOf, waitReady, waitUntil } from './operator-process';
import { openProjectSecret, projectSecretKeys } from '../../apps/core/src/tenancy/project-secrets';

jest.setTimeout(120_000);

const FINALIZER = 'hearth.gg/key-secret';

let kube: Kube;
let h: Harness;
let operator: OperatorProcess;
let world: OperatorWorld | undefined;

beforeAll(async () => {
  world = await startOperatorWorld();
  ({ kube, h, operator } = world);
  await kubectlApply(kube, [
    plan('sec-plan', { serverKeysPerEnvironment: 5 }),
    project('sec-project', { plan: 'sec-plan' }),
    environment('sec-live', 'sec-project'),
  ]);
  await waitReady(kube, ['gameenvironment', 'sec-live', '-n', NAMESPACE], 'True', 30_000);
}, 150_000);
afterAll(async () => {
  await world?.stop();
});

const ns = (kind: string, name: string) => [kind, name, '-n', NAMESPACE];
const decode = (v: string) => Buffer.from(v, 'base64').toString('utf8');

/**
 * Waits, on a watch (`kubectl wait`, inside kubectl()'s own 20 s limit), until the Ready condition's
 * reason is `reason`; answers the milliseconds it took from `since`.
 */
async function readyReasonWithin(resource: string[], reason: string, since: number, timeoutSeconds = 15): Promise<number> {
  await kubectl(kube, ['wait', ...resource, `--for=jsonpath={.status.conditions[?(@.type=="Ready")].reason}=${reason}`, `--timeout=${timeoutSeconds}s`]);
  return Date.now() - since;
}

const flagsWith = (key: string) => call(h.base, 'GET', '/flags', { token: key });

describe("a ServerKey's Secret", () => {
  test('carries the finalizer; kubectl delete leaves it Terminating and the key working, shown on the ServerKey within seconds', async () => {
    await kubectlApply(kube, [serverKey('sec-key', 'sec-live')]);
    const ready = await waitReady(kube, ns('serverkey', 'sec-key'), 'True', 30_000);
    const secret = await getJson(kube, ns('secret', 'sec-key-server-key'));
    expect(secret.metadata.finalizers).toEqual([FINALIZER]);
    expect(secret.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'hearth-operator', 'hearth.gg/server-key': 'sec-key' });
    const key = decode(secret.data.key);
    expect(decode(secret.data.keyId)).toBe(ready.status.keyId);
    expect((await flagsWith(key)).status).toBe(200);

    // The accident: the delete is accepted, but the Secret stays (Terminating) with the key in it.
    const deletedAt = Date.now();
    await kubectl(kube, ['delete', ...ns('secret', 'sec-key-server-key'), '--wait=false']);
    const tookMs = await readyReasonWithin(ns('serverkey', 'sec-key'), 'SecretDeleted', deletedAt);
    reportFigure(`a deleted (Terminating) key Secret shown on its ServerKey (SecretDeleted) after ${tookMs} ms, relist 300 s`);
    expect(tookMs).toBeLessThan(10_000);
    const held = await getJson(kube, ns('secret', 'sec-key-server-key'));
    expect(held.metadata.deletionTimestamp).toBeTruthy();
    expect(decode(held.data.key)).toBe(key);
    const obj = await getJson(kube, ns('serverkey', 'sec-key'));
    expect(readyOf(obj)).toMatchObject({
      status: 'False',
      reason: 'SecretDeleted',
      message: expect.stringContaining(`${FINALIZER} keeps it (Terminating) and the key keeps working`),
    });
    expect(JSON.stringify(obj.status)).not.toContain(key);
    // Nothing rotated: the same key is live and works.
    expect((await flagsWith(key)).status).toBe(200);
    expect(await h.db('server_keys').where({ key_id: ready.status.keyId }).whereNull('revoked_at')).toHaveLength(1);
    expect(operator.log()).not.toContain(key);
  });

  test('really gone (its finalizer taken off by hand) is SecretMissing within seconds; the key stays live until the ServerKey is deleted', async () => {
    const keyId = (await getJson(kube, ns('serverkey', 'sec-key'))).status.keyId as string;
    const key = decode((await getJson(kube, ns('secret', 'sec-key-server-key'))).data.key);
    const removedAt = Date.now();
    await kubectl(kube, ['patch', ...ns('secret', 'sec-key-server-key'), '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    const tookMs = await readyReasonWithin(ns('serverkey', 'sec-key'), 'SecretMissing', removedAt);
    reportFigure(`a key Secret really gone shown on its ServerKey (SecretMissing) after ${tookMs} ms, relist 300 s`);
    expect(tookMs).toBeLessThan(10_000);
    expect(await getOrNull(kube, ns('secret', 'sec-key-server-key'))).toBeNull();
    expect(readyOf(await getJson(kube, ns('serverkey', 'sec-key')))!.message).toContain(`no longer holds live key ${keyId}`);
    expect((await flagsWith(key)).status).toBe(200);

    // The way out: delete the ServerKey (its key revoked) and create it again (a new key, a new Secret).
    await kubectl(kube, ['delete', ...ns('serverkey', 'sec-key'), '--timeout=30s']);
    expectError(await flagsWith(key), 401, 'unauthorized');
    await kubectlApply(kube, [serverKey('sec-key', 'sec-live')]);
    const renewed = await waitReady(kube, ns('serverkey', 'sec-key'), 'True', 30_000);
    expect(renewed.status.keyId).not.toBe(keyId);
    const secret = await getJson(kube, ns('secret', 'sec-key-server-key'));
    expect(secret.metadata.finalizers).toEqual([FINALIZER]);
    expect((await flagsWith(decode(secret.data.key))).status).toBe(200);
  });

  test('a Secret without the finalizer (written before it existed) is given it at once; deleting the ServerKey takes it off', async () => {
    await kubectlApply(kube, [serverKey('sec-gone', 'sec-live')]);
    const ready = await waitReady(kube, ns('serverkey', 'sec-gone'), 'True', 30_000);
    await kubectl(kube, ['patch', ...ns('secret', 'sec-gone-server-key'), '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    await kubectl(kube, ['wait', ...ns('secret', 'sec-gone-server-key'), `--for=jsonpath={.metadata.finalizers[0]}=${FINALIZER}`, '--timeout=30s']);

    await kubectl(kube, ['delete', ...ns('serverkey', 'sec-gone'), '--timeout=30s']);
    expect(await h.db('server_keys').where({ key_id: ready.status.keyId }).whereNull('revoked_at')).toHaveLength(0);
    // Released before the ServerKey went: in a cluster the garbage collector now deletes it (none runs here).
    const secret = await getJson(kube, ns('secret', 'sec-gone-server-key'));
    expect(secret.metadata.finalizers ?? []).not.toContain(FINALIZER);
    await kubectl(kube, ['delete', ...ns('secret', 'sec-gone-server-key'), '--timeout=30s']);
    expect(await getOrNull(kube, ns('secret', 'sec-gone-server-key'))).toBeNull();
  });
});

describe('attack: a Project names a Secret not meant for it (confused deputy)', () => {
  const masterKey = randomBytes(32).toString('base64');
  const databaseUrl = `postgres://hearth:${randomBytes(12).toString('hex')}@postgres:5432/hearth`;
  const stored = async (name: string) =>
    (await h.db('projects').where({ namespace: NAMESPACE, name }).first('dashboard_client_secret', 'store_publisher_key')) as
      { dashboard_client_secret: string | null; store_publisher_key: string | null } | undefined;

  test("the master key's and the database URL's Secrets are refused (SecretNotOptedIn) and nothing of them leaves the Secret", async () => {
    // Secrets of the watched namespace as the chart's credentials are: no opt-in label.
    await kubectlApply(kube, [projectSecret('hearth-master-key', null, { key: masterKey }), projectSecret('hearth-database', null, { url: databaseUrl })]);
    const dashboard = dashboardSettings('https://idp.example', { clientSecretRef: { secretKeyRef: { name: 'hearth-master-key', key: 'key' } } });
    await kubectlApply(kube, [project('sec-deputy', { plan: 'sec-plan', dashboard } as never)]);
    const refused = await waitReady(kube, ns('project', 'sec-deputy'), 'False', 30_000);
    expect(readyOf(refused)).toMatchObject({
      reason: 'SecretNotOptedIn',
      message: `Secret ${NAMESPACE}/hearth-master-key is not labelled hearth.gg/secret-for=sec-deputy (spec.dashboard.clientSecretRef): the operator reads only Secrets labelled for this Project; label it if it is meant for it`,
    });

    // The store's publisher key pointed at the database URL: refused the same way.
    const store = { provider: 'steam', appId: 480, identity: 'hearth', publisherKey: { secretRef: { name: 'hearth-database', key: 'url' } } };
    await kubectlApply(kube, [project('sec-deputy-store', { plan: 'sec-plan', store } as never)]);
    const storeRefused = await waitReady(kube, ns('project', 'sec-deputy-store'), 'False', 30_000);
    expect(readyOf(storeRefused)).toMatchObject({
      reason: 'SecretNotOptedIn',
      message: expect.stringContaining(
        `${NAMESPACE}/hearth-database is not labelled hearth.gg/secret-for=sec-deputy-store (spec.store.publisherKey.secretRef)`,
      ),
    });

    // Nothing carried: no row (the project is not applied), no value in a status, an Event or the log.
    for (const name of ['sec-deputy', 'sec-deputy-store']) expect(await stored(name)).toBeUndefined();
    // The Warning Events are written after the status: awaited.
    const events = await waitUntil('a SecretNotOptedIn Event for each', async () => {
      const list = await getJson(kube, ['events', '-n', NAMESPACE]);
      const named = new Set(list.items.filter((e: any) => e.reason === 'SecretNotOptedIn').map((e: any) => e.involvedObject.name));
      return named.has('sec-deputy') && named.has('sec-deputy-store') ? list : undefined;
    });
    for (const text of [operator.log(), JSON.stringify(refused.status), JSON.stringify(storeRefused.status), JSON.stringify(events)]) {
      expect(text).not.toContain(masterKey);
      expect(text).not.toContain(databaseUrl);
    }
  });

  test('a Secret labelled for another Project is refused; labelled for this one, it is carried within seconds', async () => {
    const value = `client-secret-${randomBytes(6).toString('hex')}`;
    await kubectlApply(kube, [projectSecret('sec-oidc', 'sec-other', { 'client-secret': value })]);
    const dashboard = dashboardSettings('https://idp.example', { clientSecretRef: { secretKeyRef: { name: 'sec-oidc', key: 'client-secret' } } });
    await kubectlApply(kube, [project('sec-owner', { plan: 'sec-plan', dashboard } as never)]);
    const refused = await waitReady(kube, ns('project', 'sec-owner'), 'False', 30_000);
    expect(readyOf(refused)).toMatchObject({
      reason: 'SecretNotOptedIn',
      message: expect.stringContaining(`${NAMESPACE}/sec-oidc is labelled for Project "sec-other", not this one`),
    });
    expect(await stored('sec-owner')).toBeUndefined();

    // The SRE opts it in for this Project: the label's change reaches the Project through the watch.
    const labelledAt = Date.now();
    await kubectl(kube, ['label', ...ns('secret', 'sec-oidc'), 'hearth.gg/secret-for=sec-owner', '--overwrite']);
    const tookMs = await readyReasonWithin(ns('project', 'sec-owner'), 'Reconciled', labelledAt);
    reportFigure(`a Secret opted in for its Project carried (Ready) after ${tookMs} ms`);
    const sealed = (await stored('sec-owner'))!.dashboard_client_secret!;
    expect(openProjectSecret(projectSecretKeys(h.masterKey), sealed)).toBe(value);

    // A rotated value is carried within seconds, with no change to the Project.
    const rotated = `rotated-${randomBytes(6).toString('hex')}`;
    const rotatedAt = Date.now();
    await kubectlApply(kube, [projectSecret('sec-oidc', 'sec-owner', { 'client-secret': rotated })]);
    // Awaited on the database row the reconcile writes (the one thing that shows it).
    await waitUntil(
      'the rotated value carried',
      async () => {
        const now = (await stored('sec-owner'))?.dashboard_client_secret;
        return now && openProjectSecret(projectSecretKeys(h.masterKey), now) === rotated ? true : undefined;
      },
      20_000,
      100,
    );
    const carriedMs = Date.now() - rotatedAt;
    reportFigure(`a rotated opted-in Secret carried to the database after ${carriedMs} ms, relist 300 s`);
    expect(carriedMs).toBeLessThan(10_000);

    // The label taken away: refused again at once, and the value stays what it was (not read any more).
    const unlabelledAt = Date.now();
    await kubectl(kube, ['label', ...ns('secret', 'sec-oidc'), 'hearth.gg/secret-for-']);
    const refusedMs = await readyReasonWithin(ns('project', 'sec-owner'), 'SecretNotOptedIn', unlabelledAt);
    reportFigure(`a Secret's opt-in label taken away refused on its Project after ${refusedMs} ms`);
    expect(refusedMs).toBeLessThan(10_000);
  });
});
