/**
 * The chart's objects handed to a real kube-apiserver (+ etcd, test/support/kube.ts): every rendered
 * object passes server-side dry-run validation, and the operator's RBAC, applied for real, lets its
 * ServiceAccount do what the operator needs and nothing more (`kubectl auth can-i --as`).
 */
import { type Kube, startKube } from '../support/kube';
import {
  FULL_VALUES, type KubeObject, MINIMAL_VALUES, NAMESPACE, find, kubectl, named, parseObjects, prometheusCrdFiles, render, renderYaml,
} from './chart';

let kube: Kube;

function kubectlOk(args: string[], input?: string): string {
  const res = kubectl(kube.kubeconfig, args, input);
  if (res.status !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${res.status}:\n${res.stderr}${res.stdout}`);
  return res.stdout;
}

const toJsonList = (objects: KubeObject[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });

beforeAll(async () => {
  kube = await startKube();
  // The chart's ServiceMonitor and PrometheusRule need prometheus-operator's CRDs; its own CRDs come
  // with the chart (rendered with crds.install), so they are installed first to accept the kinds' objects.
  for (const file of prometheusCrdFiles()) kubectlOk(['apply', '--server-side', '-f', file]);
  const hearthCrds = render([MINIMAL_VALUES]).filter((o) => o.kind === 'CustomResourceDefinition');
  expect(hearthCrds.length).toBeGreaterThan(0);
  kubectlOk(['apply', '--server-side', '-f', '-'], toJsonList(hearthCrds));
  kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  kubectlOk(['create', 'namespace', NAMESPACE]);
}, 120_000);

afterAll(async () => {
  await kube?.stop();
});

describe('server-side dry-run: a real API server validates every object', () => {
  test.each([
    ['minimal', MINIMAL_VALUES],
    ['full', FULL_VALUES],
  ])('the %s values render objects the API server accepts', (_name, file) => {
    const objects = parseObjects(renderYaml([file]));
    const out = kubectlOk(['apply', '--dry-run=server', '-o', 'name', '-f', '-'], toJsonList(objects));
    const accepted = out.trim().split('\n').sort();
    // kubectl names each object it sent (kind.group/name); every rendered object is among them.
    expect(accepted).toHaveLength(objects.length);
    for (const o of objects) {
      const group = o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0]}` : '';
      expect(accepted).toContain(`${o.kind.toLowerCase()}${group}/${o.metadata.name}`);
    }
  });

  test('the dry-run refuses what a cluster would refuse (a Deployment whose selector misses its pods)', () => {
    const deployment = structuredClone(find(render([MINIMAL_VALUES]), 'Deployment', named('api')));
    deployment.spec.template.metadata.labels = { other: 'labels' };
    const res = kubectl(kube.kubeconfig, ['apply', '--dry-run=server', '-f', '-'], JSON.stringify(deployment));
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain('`selector` does not match template `labels`');
  });
});

describe("the operator's RBAC, applied, gives its ServiceAccount least privilege", () => {
  const sa = `system:serviceaccount:${NAMESPACE}:hearth-operator`;
  const canI = (args: string[]): boolean => {
    const res = kubectl(kube.kubeconfig, ['auth', 'can-i', ...args, `--as=${sa}`]);
    if (res.status !== 0 && res.status !== 1) throw new Error(`kubectl auth can-i ${args.join(' ')}: ${res.stderr}`);
    return res.stdout.trim() === 'yes';
  };

  beforeAll(() => {
    const rbac = render([MINIMAL_VALUES]).filter((o) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind));
    expect(rbac).toHaveLength(5);
    kubectlOk(['apply', '-f', '-'], toJsonList(rbac));
    kubectlOk(['create', 'namespace', 'starfall']);
  });

  test.each([
    [['get', 'plans.hearth.gg']],
    [['watch', 'projects.hearth.gg', '--all-namespaces']],
    [['list', 'serverkeys.hearth.gg', '-n', 'starfall']],
    [['patch', 'gameconfigs.hearth.gg', '-n', 'starfall']],
    [['patch', 'serverkeys.hearth.gg', '--subresource=status', '-n', 'starfall']],
    [['update', 'gameenvironments.hearth.gg', '--subresource=status', '-n', 'starfall']],
    [['update', 'serverkeys.hearth.gg', '--subresource=finalizers', '-n', 'starfall']],
    [['update', 'blogposts.hearth.gg', '--subresource=finalizers', '-n', 'starfall']],
    [['create', 'secrets', '-n', 'starfall']],
    [['get', 'secrets', '-n', 'starfall']],
    [['create', 'events', '-n', 'starfall']],
    [['create', 'events.events.k8s.io', '-n', 'starfall']],
    [['create', 'leases.coordination.k8s.io', '-n', NAMESPACE]],
    [['update', 'leases.coordination.k8s.io', '-n', NAMESPACE]],
  ])('may %j', (args) => {
    expect(canI(args)).toBe(true);
  });

  test.each([
    [['delete', 'pods', '-n', 'starfall']],
    [['get', 'pods', '-n', NAMESPACE]],
    [['delete', 'secrets', '-n', 'starfall']],
    [['list', 'secrets', '-n', 'starfall']],
    [['create', 'serverkeys.hearth.gg', '-n', 'starfall']],
    [['delete', 'serverkeys.hearth.gg', '-n', 'starfall']],
    [['delete', 'plans.hearth.gg']],
    [['patch', 'deployments.apps', '-n', NAMESPACE]],
    [['update', 'configmaps', '-n', 'starfall']],
    [['create', 'leases.coordination.k8s.io', '-n', 'starfall']],
    [['delete', 'leases.coordination.k8s.io', '-n', NAMESPACE]],
    [['create', 'clusterrolebindings.rbac.authorization.k8s.io']],
    [['update', 'customresourcedefinitions.apiextensions.k8s.io']],
  ])('may not %j', (args) => {
    expect(canI(args)).toBe(false);
  });

  test('admin sees the same: the checks are not answered yes for everyone', () => {
    // Guards the test itself: without --as, the admin (system:masters) may delete pods.
    const res = kubectl(kube.kubeconfig, ['auth', 'can-i', 'delete', 'pods', '-n', 'starfall']);
    expect(res.stdout.trim()).toBe('yes');
  });
});
