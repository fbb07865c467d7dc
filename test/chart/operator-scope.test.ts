/**
 * The operator holding only the RBAC the chart writes for `operator.watchNamespaces`, for real: the
 * chart's ClusterRole, Roles and bindings applied to a kube-apiserver, and `hearth operator` run as
 * its ServiceAccount (a static token of that name: RBAC matches a ServiceAccount subject by user
 * name), with the namespace list the chart gives it. It reconciles the Plans and the watched
 * namespaces' resources, writes their keys' Secrets, and never touches another namespace, which it
 * could not even read.
 *
 * The chart's ValidatingAdmissionPolicy is applied too: the operator's own writes (its key Secrets,
 * their finalizer) pass it, and its ServiceAccount can neither change nor create a Secret it does not
 * own (the master key's, say), which RBAC alone, granting create and patch on every Secret of the
 * namespace, would allow. A Project naming that Secret is refused (SecretNotOptedIn) under this RBAC.
 */
import type { AnyManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { type Kube, startKube } from '../support/kube';
import { environment, plan, project, serverKey } from '../support/manifests';
import {
  type OperatorProcess,
  getJson,
  getOrNull,
  kubectl,
  kubectlApply,
  projectSecret,
  readyOf,
  startOperatorProcess,
  waitReady,
  waitUntil,
} from '../operator/operator-process';
import { type KubeObject, MINIMAL_VALUES, NAMESPACE, find, kubectl as kubectlAs, named, render } from './chart';
import { dashboardSettings } from '../support/dashboards';

jest.setTimeout(90_000);

const WATCHED = ['games', 'tools'];
const SERVICE_ACCOUNT = `system:serviceaccount:${NAMESPACE}:hearth-operator`;

let kube: Kube;
let h: Harness;
let operator: OperatorProcess;
let objects: KubeObject[];

const inNamespace = (doc: AnyManifest, namespace: string): AnyManifest => ({ ...doc, metadata: { ...doc.metadata, namespace } }) as AnyManifest;
const toJsonList = (items: KubeObject[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });

beforeAll(async () => {
  [kube, h] = await Promise.all([
    startKube({ extraUsers: [{ name: SERVICE_ACCOUNT, groups: ['system:serviceaccounts', `system:serviceaccounts:${NAMESPACE}`] }] }),
    startHarness({ manifests: [] }),
  ]);
  objects = render([MINIMAL_VALUES], [`operator.watchNamespaces={${WATCHED.join(',')}}`]);
  await kubectl(kube, ['apply', '--server-side', '-f', '-'], toJsonList(objects.filter((o) => o.kind === 'CustomResourceDefinition')));
  await kubectl(kube, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  for (const namespace of [NAMESPACE, ...WATCHED, 'elsewhere']) await kubectl(kube, ['create', 'namespace', namespace]);
  const rbacKinds = [
    'ServiceAccount',
    'ClusterRole',
    'ClusterRoleBinding',
    'Role',
    'RoleBinding',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
  ];
  await kubectl(kube, ['apply', '-f', '-'], toJsonList(objects.filter((o) => rbacKinds.includes(o.kind))));
  // The policy is enforced once the API server has loaded it: awaited on a server-side dry run it must refuse.
  const probe = projectSecret('policy-probe', null, { x: 'y' }, 'games');
  await waitUntil(
    'the admission policy enforced',
    async () => {
      const res = kubectlAs(kube.kubeconfigFor(kube.users[0]), ['create', '--dry-run=server', '-f', '-'], JSON.stringify(probe));
      return res.status !== 0 && res.stderr.includes('ValidatingAdmissionPolicy') ? true : undefined;
    },
    30_000,
  );
  // The environment the chart gives the operator's container, as its pod would get it.
  const deployment = find(objects, 'Deployment', named('operator'));
  const chartEnv = Object.fromEntries(
    deployment.spec.template.spec.containers[0].env
      .filter((e: { value?: string }) => e.value !== undefined)
      .map((e: { name: string; value: string }) => [e.name, e.value]),
  );
  expect(chartEnv.HEARTH_OPERATOR_WATCH_NAMESPACE).toBe('games,tools');
  const user = kube.users.find((u) => u.name === SERVICE_ACCOUNT)!;
  operator = await startOperatorProcess({
    kube,
    databaseUrl: h.database.url,
    redisPrefix: h.redisPrefix,
    env: {
      KUBECONFIG: kube.kubeconfigFor(user),
      HEARTH_OPERATOR_WATCH_NAMESPACE: chartEnv.HEARTH_OPERATOR_WATCH_NAMESPACE,
      HEARTH_OPERATOR_LEASE_NAME: chartEnv.HEARTH_OPERATOR_LEASE_NAME,
      HEARTH_OPERATOR_LEASE_NAMESPACE: NAMESPACE,
    },
  });
}, 120_000);
afterAll(async () => {
  await operator?.stop();
  await h?.close();
  await kube?.stop();
});

test('with only the namespaced Roles it reconciles the Plans and every watched namespace, keys and their Secrets included', async () => {
  await kubectlApply(kube, [plan('scope-plan')]);
  for (const namespace of WATCHED) {
    await kubectlApply(kube, [
      inNamespace(project(`${namespace}-project`, { plan: 'scope-plan' }), namespace),
      inNamespace(environment(`${namespace}-live`, `${namespace}-project`, `${namespace}-live-app`), namespace),
      inNamespace(serverKey(`${namespace}-key`, `${namespace}-live`), namespace),
    ]);
  }
  await waitReady(kube, ['plan', 'scope-plan'], 'True', 30_000);
  for (const namespace of WATCHED) {
    const key = await waitReady(kube, ['serverkey', `${namespace}-key`, '-n', namespace], 'True', 30_000);
    const secret = await getJson(kube, ['secret', key.status.secretName, '-n', namespace]);
    expect(Buffer.from(secret.data.key, 'base64').toString()).toMatch(/^hsk_/);
    expect(
      await h
        .db('projects')
        .where({ namespace, name: `${namespace}-project` })
        .first(),
    ).toBeTruthy();
  }
  // A refusal still gets its Warning Event (Events are within its Roles).
  await kubectlApply(kube, [inNamespace(project('games-orphan', { plan: 'no-such-plan' }), 'games')]);
  const orphan = await waitReady(kube, ['project', 'games-orphan', '-n', 'games'], 'False', 30_000);
  expect(readyOf(orphan)!.reason).toBe('MissingReference');
  expect(operator.log()).not.toMatch(/forbidden/i);
});

test('a namespace it does not watch is left alone: no status, nothing in the database, no Secret it could not write anyway', async () => {
  await kubectlApply(kube, [
    inNamespace(project('elsewhere-project', { plan: 'scope-plan' }), 'elsewhere'),
    inNamespace(environment('elsewhere-live', 'elsewhere-project', 'elsewhere-live-app'), 'elsewhere'),
    inNamespace(serverKey('elsewhere-key', 'elsewhere-live'), 'elsewhere'),
  ]);
  // Something it does watch, applied after, is reconciled: the operator is not just slow.
  await kubectlApply(kube, [inNamespace(project('tools-later', { plan: 'scope-plan' }), 'tools')]);
  await waitReady(kube, ['project', 'tools-later', '-n', 'tools'], 'True', 30_000);
  await new Promise((r) => setTimeout(r, 1000));
  for (const [kind, name] of [
    ['project', 'elsewhere-project'],
    ['gameenvironment', 'elsewhere-live'],
    ['serverkey', 'elsewhere-key'],
  ]) {
    const obj = await getOrNull(kube, [kind, name, '-n', 'elsewhere']);
    expect({ name, status: obj.status, finalizers: obj.metadata.finalizers }).toEqual({ name, status: undefined, finalizers: undefined });
  }
  expect(await h.db('projects').where({ namespace: 'elsewhere' }).first()).toBeUndefined();
  expect((await getJson(kube, ['secrets', '-n', 'elsewhere'])).items).toEqual([]);
  expect(operator.log()).not.toMatch(/forbidden/i);
});

test('its ServiceAccount cannot change or create a Secret it does not own, and a Project naming one is refused', async () => {
  const masterKey = 'bWFzdGVyLWtleS1vZi10aGUtaW5zdGFsbC0zMi1ieXRlcyE=';
  await kubectlApply(kube, [projectSecret('hearth-master-key', null, { key: masterKey }, 'games')]);
  const asOperator = (args: string[], input?: string) => kubectlAs(kube.kubeconfigFor(kube.users[0]), [...args, '-n', 'games'], input);

  // RBAC lets it get and patch any Secret here; the admission policy refuses a patch of one it does not own.
  const patched = asOperator([
    'patch',
    'secret',
    'hearth-master-key',
    '--type=merge',
    '-p',
    '{"metadata":{"labels":{"hearth.gg/secret-for":"games-project"}}}',
  ]);
  expect(patched.status).not.toBe(0);
  expect(patched.stderr).toContain('the Hearth operator changes only the key Secrets it owns');
  // A Secret of its own making that is not a key Secret it owns: refused too.
  const created = asOperator(['create', '-f', '-'], JSON.stringify(projectSecret('planted', null, { x: 'y' }, 'games')));
  expect(created.status).not.toBe(0);
  expect(created.stderr).toContain('the Hearth operator writes only key Secrets it owns');
  // Update (a replace) and delete are not in its Role at all.
  const replaced = asOperator(['replace', '-f', '-'], JSON.stringify(projectSecret('hearth-master-key', null, { key: 'replaced' }, 'games')));
  expect(replaced.stderr).toMatch(/forbidden.*cannot update resource "secrets"/);
  const deleted = asOperator(['delete', 'secret', 'hearth-master-key']);
  expect(deleted.stderr).toMatch(/forbidden.*cannot delete resource "secrets"/);
  expect(asOperator(['auth', 'can-i', 'update', 'secrets']).stdout.trim()).toBe('no');
  expect(asOperator(['auth', 'can-i', 'delete', 'secrets']).stdout.trim()).toBe('no');
  const secret = await getJson(kube, ['secret', 'hearth-master-key', '-n', 'games']);
  expect(secret.metadata.labels).toBeUndefined();
  expect(Buffer.from(secret.data.key, 'base64').toString()).toBe(masterKey);

  // The confused deputy: a Project naming the master key's Secret is refused; nothing reaches the database.
  const dashboard = dashboardSettings('https://idp.example', { clientSecretRef: { secretKeyRef: { name: 'hearth-master-key', key: 'key' } } });
  await kubectlApply(kube, [inNamespace(project('games-deputy', { plan: 'scope-plan', dashboard } as never), 'games')]);
  const refused = await waitReady(kube, ['project', 'games-deputy', '-n', 'games'], 'False', 30_000);
  expect(readyOf(refused)).toMatchObject({
    reason: 'SecretNotOptedIn',
    message: expect.stringContaining('games/hearth-master-key is not labelled hearth.gg/secret-for=games-deputy'),
  });
  expect(await h.db('projects').where({ namespace: 'games', name: 'games-deputy' }).first()).toBeUndefined();
  expect(operator.log()).not.toContain(masterKey);

  // Its own key Secret it may still change: deleting the ServerKey takes the Secret's finalizer off (a patch the policy lets through).
  expect((await getJson(kube, ['secret', 'games-key-server-key', '-n', 'games'])).metadata.finalizers).toEqual(['hearth.gg/key-secret']);
  await kubectl(kube, ['delete', 'serverkey', 'games-key', '-n', 'games', '--timeout=30s']);
  expect((await getJson(kube, ['secret', 'games-key-server-key', '-n', 'games'])).metadata.finalizers ?? []).toEqual([]);
  expect(operator.log()).not.toMatch(/forbidden|denied request/i);
});
