/**
 * The chart's objects handed to a real kube-apiserver (+ etcd, test/support/kube.ts): every rendered
 * object passes server-side dry-run validation, and the operator's RBAC, applied for real, lets its
 * ServiceAccount do what the operator needs and nothing more (`kubectl auth can-i --as`).
 */
import { type Kube, startKube } from '../support/kube';
import {
  CHART,
  FULL_VALUES,
  type KubeObject,
  MINIMAL_VALUES,
  NAMESPACE,
  find,
  helm,
  kubectl,
  named,
  parseObjects,
  prometheusCrdFiles,
  render,
  renderYaml,
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
  // The chart's ServiceMonitor, PrometheusRule and HTTPRoute need prometheus-operator's and the Gateway
  // API's CRDs (build.sh fetches them); its own CRDs come
  // with the chart (rendered with crds.install), so they are installed first to accept the kinds' objects.
  for (const file of prometheusCrdFiles()) kubectlOk(['apply', '--server-side', '-f', file]);
  const hearthCrds = render([MINIMAL_VALUES]).filter((o) => o.kind === 'CustomResourceDefinition');
  expect(hearthCrds.length).toBeGreaterThan(0);
  kubectlOk(['apply', '--server-side', '-f', '-'], toJsonList(hearthCrds));
  kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  kubectlOk(['create', 'namespace', NAMESPACE]);
  // The `restricted` Pod Security level, enforced (pods: the helm test Pod) and warned about (workloads).
  kubectlOk(['label', 'namespace', NAMESPACE, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/warn=restricted']);
  // The full values' operator also watches `games` (a Role there).
  kubectlOk(['create', 'namespace', 'games']);
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
    const res = kubectl(kube.kubeconfig, ['apply', '--dry-run=server', '-o', 'name', '-f', '-'], toJsonList(objects));
    expect(res.stderr.split('\n').filter((line) => /PodSecurity/.test(line))).toEqual([]);
    expect(res.status).toBe(0);
    const out = res.stdout;
    const accepted = out.trim().split('\n').sort();
    // kubectl names each object it sent (kind.group/name); every rendered object is among them.
    expect(accepted).toHaveLength(objects.length);
    for (const o of objects) {
      const group = o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0]}` : '';
      expect(accepted).toContain(`${o.kind.toLowerCase()}${group}/${o.metadata.name}`);
    }
  });

  test('the namespace enforces the restricted Pod Security level: a chart Pod that breaks it is refused, a Deployment warned about', () => {
    const loose = render([MINIMAL_VALUES], ['securityContext.allowPrivilegeEscalation=true']);
    const pod = kubectl(kube.kubeconfig, ['apply', '--dry-run=server', '-f', '-'], JSON.stringify(find(loose, 'Pod', named('test'))));
    expect(pod.status).not.toBe(0);
    expect(pod.stderr).toContain('violates PodSecurity "restricted:latest"');
    const deployment = kubectl(kube.kubeconfig, ['apply', '--dry-run=server', '-f', '-'], JSON.stringify(find(loose, 'Deployment', named('api'))));
    expect(deployment.stderr).toContain('would violate PodSecurity "restricted:latest"');
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
  const applyRbac = (sets: string[]) => {
    const rbac = render([MINIMAL_VALUES], sets).filter((o) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind));
    kubectlOk(['apply', '-f', '-'], toJsonList(rbac));
    return rbac;
  };

  beforeAll(() => {
    for (const namespace of ['starfall', 'elsewhere']) kubectlOk(['create', 'namespace', namespace]);
  });

  describe('watching a list of namespaces (the default: the release namespace)', () => {
    beforeAll(() => {
      const rbac = applyRbac([`operator.watchNamespaces={${NAMESPACE},starfall}`]);
      expect(rbac.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort()).toEqual([
        'ClusterRole//hearth-operator',
        'ClusterRoleBinding//hearth-operator',
        `Role/${NAMESPACE}/hearth-operator`,
        `Role/${NAMESPACE}/hearth-operator-resources`,
        'Role/starfall/hearth-operator-resources',
        `RoleBinding/${NAMESPACE}/hearth-operator`,
        `RoleBinding/${NAMESPACE}/hearth-operator-resources`,
        'RoleBinding/starfall/hearth-operator-resources',
        `ServiceAccount/${NAMESPACE}/hearth-operator`,
      ]);
    });

    test.each([
      [['get', 'plans.hearth.gg']],
      [['watch', 'plans.hearth.gg']],
      [['update', 'plans.hearth.gg', '--subresource=status']],
      [['list', 'serverkeys.hearth.gg', '-n', 'starfall']],
      [['watch', 'projects.hearth.gg', '-n', NAMESPACE]],
      [['patch', 'gameconfigs.hearth.gg', '-n', 'starfall']],
      [['patch', 'serverkeys.hearth.gg', '--subresource=status', '-n', 'starfall']],
      [['update', 'gameenvironments.hearth.gg', '--subresource=status', '-n', 'starfall']],
      [['update', 'serverkeys.hearth.gg', '--subresource=finalizers', '-n', 'starfall']],
      [['update', 'blogposts.hearth.gg', '--subresource=finalizers', '-n', NAMESPACE]],
      [['create', 'secrets', '-n', 'starfall']],
      [['get', 'secrets', '-n', NAMESPACE]],
      [['patch', 'secrets', '-n', 'starfall']], // its key Secrets' data and finalizer (the admission policy narrows it to them)
      [['list', 'secrets', '-n', 'starfall']], // its Secret watches (by label: RBAC cannot say which)
      [['watch', 'secrets', '-n', NAMESPACE]],
      [['create', 'events', '-n', 'starfall']],
      [['create', 'events', '-n', 'default']], // a Plan's Events
      [['create', 'events.events.k8s.io', '-n', 'starfall']],
      [['create', 'leases.coordination.k8s.io', '-n', NAMESPACE]],
      [['update', 'leases.coordination.k8s.io', '-n', NAMESPACE]],
    ])('may %j', (args) => {
      expect(canI(args)).toBe(true);
    });

    test.each([
      // Nothing in a namespace it does not watch: above all, not its Secrets.
      [['get', 'secrets', '-n', 'elsewhere']],
      [['create', 'secrets', '-n', 'elsewhere']],
      [['update', 'secrets', '-n', 'elsewhere']],
      [['list', 'projects.hearth.gg', '-n', 'elsewhere']],
      [['watch', 'projects.hearth.gg', '--all-namespaces']],
      [['get', 'secrets', '--all-namespaces']],
      [['delete', 'pods', '-n', 'starfall']],
      [['get', 'pods', '-n', NAMESPACE]],
      [['delete', 'secrets', '-n', 'starfall']],
      [['update', 'secrets', '-n', 'starfall']],
      [['list', 'secrets', '-n', 'elsewhere']],
      [['watch', 'secrets', '--all-namespaces']],
      [['create', 'serverkeys.hearth.gg', '-n', 'starfall']],
      [['delete', 'serverkeys.hearth.gg', '-n', 'starfall']],
      [['delete', 'plans.hearth.gg']],
      [['create', 'plans.hearth.gg']],
      [['patch', 'deployments.apps', '-n', NAMESPACE]],
      [['update', 'configmaps', '-n', 'starfall']],
      [['create', 'leases.coordination.k8s.io', '-n', 'starfall']],
      [['delete', 'leases.coordination.k8s.io', '-n', NAMESPACE]],
      [['create', 'clusterrolebindings.rbac.authorization.k8s.io']],
      [['update', 'customresourcedefinitions.apiextensions.k8s.io']],
    ])('may not %j', (args) => {
      expect(canI(args)).toBe(false);
    });
  });

  describe('operator.clusterWide, the explicit choice', () => {
    beforeAll(() => {
      applyRbac(['operator.clusterWide=true']);
    });

    test.each([
      [['watch', 'projects.hearth.gg', '--all-namespaces']],
      [['create', 'secrets', '-n', 'elsewhere']],
      [['get', 'secrets', '-n', 'elsewhere']],
      [['watch', 'secrets', '--all-namespaces']],
      [['list', 'serverkeys.hearth.gg', '-n', 'elsewhere']],
    ])('may %j', (args) => {
      expect(canI(args)).toBe(true);
    });

    test.each([
      [['update', 'secrets', '-n', 'elsewhere']],
      [['delete', 'secrets', '-n', 'elsewhere']],
      [['create', 'serverkeys.hearth.gg', '-n', 'elsewhere']],
    ])('still may not %j', (args) => {
      expect(canI(args)).toBe(false);
    });
  });

  test('admin sees the same: the checks are not answered yes for everyone', () => {
    // Guards the test itself: without --as, the admin (system:masters) may delete pods.
    const res = kubectl(kube.kubeconfig, ['auth', 'can-i', 'delete', 'pods', '-n', 'starfall']);
    expect(res.stdout.trim()).toBe('yes');
  });
});

describe('a release installed, upgraded and uninstalled with helm on the real API server', () => {
  // Its own namespace and release name: the CRDs and the RBAC above are someone else's objects here.
  const ns = 'release-life';
  const helmIn = (args: string[]) => {
    const res = helm([...args, '--kubeconfig', kube.kubeconfig, '--namespace', ns]);
    if (res.status !== 0) throw new Error(`helm ${args.join(' ')} exited ${res.status}:\n${res.stderr}${res.stdout}`);
    return res.stdout;
  };
  // Hooks need a Job controller to finish (there is none beside this API server): --no-hooks here;
  // install.test.ts runs them, with the controllers.
  const install = (verb: 'install' | 'upgrade', sets: string[] = []) =>
    helmIn([
      verb,
      'blue',
      CHART,
      '--values',
      MINIMAL_VALUES,
      '--no-hooks',
      '--set',
      'crds.install=false',
      '--set',
      'redis.existingSecret=blue-redis',
      ...sets.flatMap((s) => ['--set', s]),
    ]);
  const checksum = () =>
    JSON.parse(kubectlOk(['get', 'deployment', 'blue-hearth-api', '-n', ns, '-o', 'json'])).spec.template.metadata.annotations['checksum/secrets'] as string;
  const uidOf = (secret: string) => JSON.parse(kubectlOk(['get', 'secret', secret, '-n', ns, '-o', 'json'])).metadata.uid as string;
  let notes = '';

  beforeAll(() => {
    kubectlOk(['create', 'namespace', ns]);
    kubectlOk(['create', 'secret', 'generic', 'blue-redis', '-n', ns, '--from-literal=url=redis://redis-a.databases.svc:6379']);
    notes = install('install');
  }, 120_000);

  test('the credential Secrets are release objects: in `helm get manifest`, owned by the release', () => {
    const manifest = parseObjects(helmIn(['get', 'manifest', 'blue']));
    expect(
      manifest
        .filter((o) => o.kind === 'Secret')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['blue-hearth-database', 'blue-hearth-master-key']);
    const secret = JSON.parse(kubectlOk(['get', 'secret', 'blue-hearth-master-key', '-n', ns, '-o', 'json']));
    expect(secret.metadata.annotations).toMatchObject({ 'meta.helm.sh/release-name': 'blue', 'meta.helm.sh/release-namespace': ns });
    expect(secret.metadata.labels['app.kubernetes.io/managed-by']).toBe('Helm');
  });

  test('NOTES.txt tells how to reach it, check it, and what is off', () => {
    expect(notes).toContain(`kubectl -n ${ns} port-forward svc/blue-hearth-api 8080:80`);
    expect(notes).toContain(`helm test blue -n ${ns}`);
    expect(notes).toContain('Crash reports are off: objectStorage.url is not set');
    expect(notes).toContain(`reconciles hearth.gg resources in ${ns} (and the cluster-scoped Plans)`);
    expect(notes).toContain('Keep a copy of masterKey.value');
  });

  test('an upgrade keeps the Secrets (updated in place, not re-created) and the pods (same checksum) when nothing changed', () => {
    const [before, uid] = [checksum(), uidOf('blue-hearth-database')];
    install('upgrade');
    expect(checksum()).toBe(before);
    expect(uidOf('blue-hearth-database')).toBe(uid);
    // A changed URL is written into the same Secret, and rolls the pods.
    install('upgrade', ['database.url=postgres://hearth:rotated@postgres.databases.svc:5432/hearth']);
    expect(uidOf('blue-hearth-database')).toBe(uid);
    expect(Buffer.from(JSON.parse(kubectlOk(['get', 'secret', 'blue-hearth-database', '-n', ns, '-o', 'json'])).data.url, 'base64').toString()).toContain(
      'rotated',
    );
    expect(checksum()).not.toBe(before);
  });

  test('a credential rotated in an existingSecret rolls the pods at the next upgrade', () => {
    const before = checksum();
    install('upgrade', ['database.url=postgres://hearth:rotated@postgres.databases.svc:5432/hearth']);
    expect(checksum()).toBe(before);
    kubectlOk(
      ['apply', '-f', '-'],
      kubectlOk([
        'create',
        'secret',
        'generic',
        'blue-redis',
        '-n',
        ns,
        '--from-literal=url=redis://redis-b.databases.svc:6379',
        '--dry-run=client',
        '-o',
        'json',
      ]),
    );
    install('upgrade', ['database.url=postgres://hearth:rotated@postgres.databases.svc:5432/hearth']);
    expect(checksum()).not.toBe(before);
  });

  test('uninstall deletes the Secrets it wrote, and leaves the existingSecret it only read', () => {
    helmIn(['uninstall', 'blue']);
    const left = JSON.parse(kubectlOk(['get', 'secrets', '-n', ns, '-o', 'json'])).items.map((s: KubeObject) => s.metadata.name);
    expect(left).toEqual(['blue-redis']);
  });
});
