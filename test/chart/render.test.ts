/**
 * charts/hearth through the real `helm`: lint, the schema's refusals, and what `helm template`
 * renders with the minimal values (the chart's defaults plus the three credentials) and with the full
 * values (every optional object on). test/chart/apiserver.test.ts hands the same renders to a real
 * kube-apiserver.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { CRASH_QUEUE_DEPTH_SQL } from '@hearth/core/crashes';
import { MANIFEST_KINDS } from '@hearth/core/manifests';
import { kubeToolPath } from '../support/kube';
import {
  CHART,
  FULL_VALUES,
  KUBE_VERSION,
  type KubeObject,
  MINIMAL_VALUES,
  NAMESPACE,
  find,
  hearthCrdFiles,
  helm,
  named,
  parseObjects,
  render,
  runOk,
  templateArgs,
} from './chart';

let minimal: KubeObject[];
let full: KubeObject[];
beforeAll(() => {
  minimal = render([MINIMAL_VALUES]);
  full = render([FULL_VALUES]);
});

const kinds = (objects: KubeObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
const container = (workload: KubeObject) => workload.spec.template.spec.containers[0];
const env = (workload: KubeObject): Record<string, unknown> =>
  Object.fromEntries(container(workload).env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [e.name, e.value ?? e.valueFrom]));

describe('helm lint', () => {
  test.each([
    ['minimal', MINIMAL_VALUES],
    ['full', FULL_VALUES],
  ])('passes --strict with the %s values', (_name, file) => {
    const res = helm(['lint', CHART, '--strict', '--kube-version', KUBE_VERSION, '--values', file]);
    expect(res.stderr + res.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(res.status).toBe(0);
  });
});

describe('values the chart refuses', () => {
  test.each([
    ['a negative replica count', ['api.replicas=-1'], "at '/api/replicas'"],
    ['a misspelt knob', ['api.replica=3'], "additional properties 'replica' not allowed"],
    ['a master key that is not 32 bytes', ['masterKey.value=short'], "at '/masterKey/value'"],
    ['an unknown log level', ['config.logLevel=loud'], "at '/config/logLevel'"],
    ['a database URL of another scheme', ['database.url=mysql://db/hearth'], "at '/database/url'"],
    ['an HPA aiming above 100% CPU', ['api.autoscaling.targetCPUUtilizationPercentage=150'], "at '/api/autoscaling/targetCPUUtilizationPercentage'"],
    ['an object storage URL of another scheme', ['objectStorage.url=https://bucket.example.com'], "at '/objectStorage/url'"],
    ['a queue scaler aiming at 0 jobs per pod', ['crashWorkerQueueScaling.jobsPerReplica=0'], "at '/crashWorkerQueueScaling/jobsPerReplica'"],
    ['a relative runbook link', ['metrics.prometheusRule.runbookUrl=docs/operations.md'], "at '/metrics/prometheusRule/runbookUrl'"],
  ])('values.schema.json refuses %s', (_what, sets, message) => {
    const res = helm(templateArgs([MINIMAL_VALUES], sets));
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain("values don't meet the specifications of the schema");
    expect(res.stderr).toContain(message);
  });

  test('each credential is required, and the refusal names the value to set', () => {
    const none = helm(templateArgs([]));
    expect(none.status).not.toBe(0);
    expect(none.stderr).toContain('database.url (or database.existingSecret) is required');
    const dbOnly = helm(templateArgs([], ['database.url=postgres://h@db/h']));
    expect(dbOnly.stderr).toContain('redis.url (or redis.existingSecret) is required');
    const noKey = helm(templateArgs([], ['database.url=postgres://h@db/h', 'redis.url=redis://r:6379']));
    expect(noKey.stderr).toContain('masterKey.value (or masterKey.existingSecret) is required');
    const withSecrets = helm(templateArgs([], ['database.existingSecret=db', 'redis.existingSecret=r', 'masterKey.existingSecret=k']));
    expect(withSecrets.stderr).toBe('');
    expect(withSecrets.status).toBe(0);
  });

  test('an Ingress with no host is refused', () => {
    const res = helm(templateArgs([MINIMAL_VALUES], ['ingress.enabled=true']));
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain('ingress.hosts needs at least one host');
  });
});

describe('what the chart renders', () => {
  test('with the minimal values: api, realtime and operator (no crash worker without a store), the migrations hook, the test Pod, no optional object', () => {
    expect(kinds(minimal)).toEqual(
      [
        'ClusterRole/hearth-operator',
        'ClusterRoleBinding/hearth-operator',
        'Deployment/hearth-api',
        'Deployment/hearth-operator',
        'Deployment/hearth-realtime',
        'HorizontalPodAutoscaler/hearth-api',
        'Job/hearth-migrations',
        'Pod/hearth-test',
        'PodDisruptionBudget/hearth-api',
        'PodDisruptionBudget/hearth-operator',
        'PodDisruptionBudget/hearth-realtime',
        'Role/hearth-operator',
        'RoleBinding/hearth-operator',
        'Role/hearth-operator-resources',
        'RoleBinding/hearth-operator-resources',
        'Secret/hearth-database',
        'Secret/hearth-master-key',
        'Secret/hearth-migrations',
        'Secret/hearth-redis',
        'Service/hearth-api',
        'Service/hearth-operator',
        'Service/hearth-realtime',
        'ServiceAccount/hearth-operator',
        'ValidatingAdmissionPolicy/hearth-operator-secrets',
        'ValidatingAdmissionPolicyBinding/hearth-operator-secrets',
        ...hearthCrdFiles().map((f) => `CustomResourceDefinition/${parse(fs.readFileSync(f, 'utf8').replace(/^\{\{.*\}\}$/gm, '')).metadata.name}`),
      ].sort(),
    );
    const clusterScoped = ['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];
    for (const o of minimal) if (!clusterScoped.includes(o.kind)) expect(o.metadata.namespace).toBe(NAMESPACE);
  });

  test('with the full values: every optional object too', () => {
    const names = kinds(full);
    for (const expected of [
      'Deployment/hearth-crash-worker',
      'Service/hearth-crash-worker',
      'HorizontalPodAutoscaler/hearth-crash-worker',
      'PodDisruptionBudget/hearth-crash-worker',
      'HorizontalPodAutoscaler/hearth-realtime',
      'Ingress/hearth-api',
      'Ingress/hearth-realtime',
      'ServiceMonitor/hearth',
      'PrometheusRule/hearth',
      'NetworkPolicy/hearth',
      'NetworkPolicy/hearth-operator',
      'ConfigMap/hearth-dashboard-hearth-api',
      'ConfigMap/hearth-dashboard-hearth-economy',
      'ConfigMap/hearth-dashboard-hearth-operator',
      'ConfigMap/hearth-dashboard-hearth-overview',
      'ConfigMap/hearth-dashboard-hearth-realtime',
      'ConfigMap/hearth-dashboard-hearth-workers',
    ])
      expect(names).toContain(expected);
    expect(container(find(full, 'Deployment', 'hearth-crash-worker')).args).toEqual(['crash-worker']);
  });

  test('turning the CRDs off leaves them out', () => {
    const objects = render([MINIMAL_VALUES], ['crds.install=false']);
    expect(objects.filter((o) => o.kind === 'CustomResourceDefinition')).toEqual([]);
  });
});

describe('workloads', () => {
  const workloads = () => [
    ...['api', 'realtime', 'operator', 'crash-worker'].map((c) => find(full, 'Deployment', named(c))),
    find(full, 'Job', named('migrations')),
  ];

  test('one image for all, the entry point chosen by args', () => {
    const args = Object.fromEntries(workloads().map((w) => [w.metadata.name, container(w).args]));
    expect(args).toEqual({
      'hearth-api': ['api'],
      'hearth-realtime': ['realtime'],
      'hearth-operator': ['operator'],
      'hearth-crash-worker': ['crash-worker'],
      'hearth-migrations': ['migrate'],
    });
    for (const w of workloads()) expect(container(w).image).toBe('registry.example.com/hearth:1.2.3');
    expect(container(find(minimal, 'Deployment', named('api'))).image).toBe(
      `ghcr.io/hearth-gg/hearth:${parse(fs.readFileSync(path.join(CHART, 'Chart.yaml'), 'utf8')).appVersion}`,
    );
  });

  test('non-root, read-only root filesystem, no capabilities, seccomp RuntimeDefault, a writable /tmp', () => {
    for (const w of workloads()) {
      const pod = w.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(container(w).securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      });
      // /tmp, and the full values' CA bundle (extraVolumes / extraVolumeMounts) in every pod, migrations included.
      expect(container(w).volumeMounts).toEqual([
        { name: 'tmp', mountPath: '/tmp' },
        { name: 'database-ca', mountPath: '/etc/hearth/ca', readOnly: true },
      ]);
      expect(pod.volumes).toEqual([
        { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
        { name: 'database-ca', configMap: { name: 'database-ca' } },
      ]);
      expect(container(w).resources.requests).toBeDefined();
      // Only the operator gets a Kubernetes token.
      expect(pod.automountServiceAccountToken).toBe(w.metadata.name === 'hearth-operator');
    }
    expect(find(full, 'Deployment', named('operator')).spec.template.spec.serviceAccountName).toBe('hearth-operator');
  });

  test('probes on /healthz and /readyz, on ports the container declares', () => {
    const expected: Record<string, [string, number]> = {
      api: ['http', 8080],
      realtime: ['http', 8081],
      operator: ['metrics', 9090],
      'crash-worker': ['metrics', 9090],
    };
    for (const [component, [portName, port]] of Object.entries(expected)) {
      const c = container(find(full, 'Deployment', named(component)));
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: portName });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: portName });
      expect(c.ports).toContainEqual({ name: portName, containerPort: port, protocol: 'TCP' });
    }
  });

  test('each process listens where its command reads (PORT, REALTIME_PORT, METRICS_PORT) and gets only the credentials it needs', () => {
    const api = env(find(minimal, 'Deployment', named('api')));
    expect(api).toMatchObject({
      PORT: '8080',
      METRICS_PORT: '9090',
      HEARTH_TRUSTED_PROXIES: '1',
      LOG_LEVEL: 'info',
      REDIS_PREFIX: 'hearth:',
      HEARTH_DASHBOARDS: 'on',
    });
    expect(env(find(render([MINIMAL_VALUES], ['config.dashboards=false']), 'Deployment', named('api'))).HEARTH_DASHBOARDS).toBe('off');
    expect(Object.keys(api)).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'HEARTH_MASTER_KEY']));
    expect(env(find(minimal, 'Deployment', named('realtime')))).toMatchObject({ REALTIME_PORT: '8081', METRICS_PORT: '9090' });
    const operator = env(find(minimal, 'Deployment', named('operator')));
    expect(Object.keys(operator)).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'POD_NAME', 'POD_NAMESPACE', 'METRICS_PORT']));
    expect(operator).not.toHaveProperty('HEARTH_MASTER_KEY');
    // One Lease per release, so two releases in one namespace elect their own leaders.
    expect(operator.HEARTH_OPERATOR_LEASE_NAME).toBe('hearth-operator');
    expect(env(find(render([MINIMAL_VALUES], ['fullnameOverride=blue']), 'Deployment', 'blue-operator')).HEARTH_OPERATOR_LEASE_NAME).toBe('blue-operator');
    const migrate = env(find(minimal, 'Job', named('migrations')));
    expect(Object.keys(migrate).sort()).toEqual(['DATABASE_URL', 'LOG_LEVEL', 'REDIS_PREFIX']);
    // extraEnv of the whole chart reaches every container.
    expect(env(find(full, 'Deployment', named('realtime')))).toMatchObject({ NODE_OPTIONS: '--max-old-space-size=384', LOG_LEVEL: 'debug' });
  });

  test('two operator replicas (one leads through the Lease); the API scaled by its HPA, not by replicas', () => {
    expect(find(minimal, 'Deployment', named('operator')).spec.replicas).toBe(2);
    expect(find(minimal, 'Deployment', named('realtime')).spec.replicas).toBe(2);
    expect(find(minimal, 'Deployment', named('api')).spec).not.toHaveProperty('replicas');
    expect(find(minimal, 'HorizontalPodAutoscaler', named('api')).spec).toMatchObject({
      scaleTargetRef: { kind: 'Deployment', name: 'hearth-api' },
      minReplicas: 2,
      maxReplicas: 10,
    });
    expect(find(minimal, 'PodDisruptionBudget', named('api')).spec).toEqual({
      minAvailable: 1,
      selector: { matchLabels: find(minimal, 'Deployment', named('api')).spec.selector.matchLabels },
    });
  });

  test('pods spread across nodes by default; a component may give its own constraints', () => {
    const api = find(minimal, 'Deployment', named('api'));
    expect(api.spec.template.spec.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: api.spec.selector.matchLabels },
      },
    ]);
    expect(find(full, 'Deployment', named('realtime')).spec.template.spec.topologySpreadConstraints[0].topologyKey).toBe('topology.kubernetes.io/zone');
  });
});

describe('the migrations hook and the credentials', () => {
  test('the migrations Job runs before install and upgrade, reading the database URL from a hook Secret of its own made just before it and deleted after', () => {
    const job = find(minimal, 'Job', named('migrations'));
    expect(job.metadata.annotations).toEqual({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-weight': '0',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
    const hookSecret = find(minimal, 'Secret', named('migrations'));
    expect(hookSecret.metadata.annotations).toEqual({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-weight': '-10',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded,hook-failed',
    });
    expect(hookSecret.stringData).toEqual({ url: 'postgres://hearth:secret@postgres.databases.svc:5432/hearth' });
    expect(env(job).DATABASE_URL).toEqual({ secretKeyRef: { name: named('migrations'), key: 'url' } });
    // With an existing Secret the Job reads it (it exists before the install): no hook Secret.
    const existing = render([MINIMAL_VALUES], ['database.existingSecret=db-creds', 'database.existingSecretKey=dsn']);
    expect(existing.some((o) => o.kind === 'Secret' && o.metadata.name === named('migrations'))).toBe(false);
    expect(env(find(existing, 'Job', named('migrations'))).DATABASE_URL).toEqual({ secretKeyRef: { name: 'db-creds', key: 'dsn' } });
  });

  test('the credential Secrets are ordinary release objects, not hooks (in `helm get manifest`, deleted on uninstall, updated in place on upgrade)', () => {
    for (const name of ['database', 'redis', 'master-key']) expect(find(minimal, 'Secret', named(name)).metadata.annotations).toBeUndefined();
    const storage = render(
      [MINIMAL_VALUES],
      ['objectStorage.url=s3://b', 'objectStorage.credentials.accessKeyId=AK', 'objectStorage.credentials.secretAccessKey=SK'],
    );
    expect(find(storage, 'Secret', named('object-storage')).metadata.annotations).toBeUndefined();
  });

  test('the chart writes a Secret per credential, or reads an existing Secret instead', () => {
    expect(find(minimal, 'Secret', named('database')).stringData).toEqual({ url: 'postgres://hearth:secret@postgres.databases.svc:5432/hearth' });
    expect(find(minimal, 'Secret', named('master-key')).stringData.key).toMatch(/^[0-9a-f]{64}$/);
    const minimalApi = env(find(minimal, 'Deployment', named('api')));
    expect(minimalApi.REDIS_URL).toEqual({ secretKeyRef: { name: 'hearth-redis', key: 'url' } });
    expect(minimalApi.HEARTH_MASTER_KEY).toEqual({ secretKeyRef: { name: 'hearth-master-key', key: 'key' } });

    // The full values read Redis and the master key from existing Secrets: the chart writes neither.
    expect(
      full
        .filter((o) => o.kind === 'Secret')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['hearth-database', 'hearth-migrations']);
    const fullApi = env(find(full, 'Deployment', named('api')));
    expect(fullApi.REDIS_URL).toEqual({ secretKeyRef: { name: 'hearth-redis-credentials', key: 'redis-url' } });
    expect(fullApi.HEARTH_MASTER_KEY).toEqual({ secretKeyRef: { name: 'hearth-master-key', key: 'master-key' } });
    expect(fullApi.DATABASE_URL).toEqual({ secretKeyRef: { name: 'hearth-database', key: 'url' } });
    expect(env(find(full, 'Deployment', named('operator'))).REDIS_URL).toEqual(fullApi.REDIS_URL);
  });

  test('a changed credential rolls the pods (a checksum of the Secrets on the pod template)', () => {
    const checksum = (objects: KubeObject[]) => find(objects, 'Deployment', named('api')).spec.template.metadata.annotations['checksum/secrets'];
    expect(checksum(render([MINIMAL_VALUES], ['database.url=postgres://other@db/hearth']))).not.toBe(checksum(minimal));
  });
});

describe('ingress', () => {
  test('the socket has an Ingress of its own: its path, cookie affinity and long timeouts', () => {
    const socket = find(full, 'Ingress', named('realtime'));
    expect(socket.metadata.annotations).toEqual({
      'cert-manager.io/cluster-issuer': 'letsencrypt', // ingress.annotations, on both
      'nginx.ingress.kubernetes.io/affinity': 'cookie',
      'nginx.ingress.kubernetes.io/affinity-mode': 'persistent',
      'nginx.ingress.kubernetes.io/session-cookie-name': 'hearth-realtime',
      'nginx.ingress.kubernetes.io/session-cookie-max-age': '172800',
      'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600',
      'nginx.ingress.kubernetes.io/proxy-send-timeout': '3600',
    });
    expect(socket.spec.ingressClassName).toBe('nginx');
    expect(socket.spec.tls).toEqual([{ secretName: 'hearth-tls', hosts: ['api.hearth.example.com'] }]);
    expect(socket.spec.rules).toEqual([
      {
        host: 'api.hearth.example.com',
        http: { paths: [{ path: '/v1/realtime/socket', pathType: 'Exact', backend: { service: { name: 'hearth-realtime', port: { name: 'http' } } } }] },
      },
    ]);
  });

  test("the API Ingress serves everything else, without the socket's affinity", () => {
    const api = find(full, 'Ingress', named('api'));
    expect(api.metadata.annotations).toEqual({
      'cert-manager.io/cluster-issuer': 'letsencrypt',
      'nginx.ingress.kubernetes.io/proxy-body-size': '2m',
    });
    expect(api.spec.rules[0].http.paths).toEqual([{ path: '/', pathType: 'Prefix', backend: { service: { name: 'hearth-api', port: { name: 'http' } } } }]);
  });
});

describe('operator RBAC', () => {
  const resourcesOf = (define: string) => {
    const text = fs.readFileSync(path.join(CHART, 'templates', 'crds', '_resources.tpl'), 'utf8');
    const body = text.split(`{{- define "${define}" -}}`)[1].split('{{- end }}')[0];
    return parse(body) as string[];
  };
  const resourceRules = (plurals: string[]) => [
    { apiGroups: ['hearth.gg'], resources: plurals, verbs: ['get', 'list', 'watch', 'update', 'patch'] },
    { apiGroups: ['hearth.gg'], resources: plurals.map((r) => `${r}/status`), verbs: ['get', 'update', 'patch'] },
    { apiGroups: ['hearth.gg'], resources: plurals.map((r) => `${r}/finalizers`), verbs: ['update'] },
  ];
  // No update or delete: the key Secrets are written and re-written with create and patch (secret-policy.yaml narrows both to the operator's own).
  const SECRETS = { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'patch'] };
  const EVENTS = { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] };

  test('by default the release namespace only: a Role there for the namespaced kinds, their Secrets and Events; the ClusterRole has Plans and Events, no Secrets', () => {
    expect(find(minimal, 'ClusterRole', named('operator')).rules).toEqual([...resourceRules(['plans']), EVENTS]);
    const role = find(minimal, 'Role', named('operator-resources'));
    expect(role.metadata.namespace).toBe(NAMESPACE);
    expect(role.rules).toEqual([...resourceRules(resourcesOf('hearth.operatorNamespacedResources')), SECRETS, EVENTS]);
    expect(find(minimal, 'RoleBinding', named('operator-resources')).subjects).toEqual([
      { kind: 'ServiceAccount', name: 'hearth-operator', namespace: NAMESPACE },
    ]);
    // The operator watches exactly the namespaces its Roles cover.
    expect(env(find(minimal, 'Deployment', named('operator'))).HEARTH_OPERATOR_WATCH_NAMESPACE).toBe(NAMESPACE);
    expect(find(minimal, 'ClusterRoleBinding', named('operator')).subjects).toEqual([
      { kind: 'ServiceAccount', name: 'hearth-operator', namespace: NAMESPACE },
    ]);
  });

  test('watchNamespaces: a Role and RoleBinding in each, bound to the ServiceAccount in the release namespace, and the same list for the operator', () => {
    const roles = full.filter((o) => o.kind === 'Role' && o.metadata.name === named('operator-resources'));
    expect(roles.map((r) => r.metadata.namespace)).toEqual([NAMESPACE, 'games']);
    const bindings = full.filter((o) => o.kind === 'RoleBinding' && o.metadata.name === named('operator-resources'));
    expect(bindings.map((b) => [b.metadata.namespace, b.subjects[0].namespace])).toEqual([
      [NAMESPACE, NAMESPACE],
      ['games', NAMESPACE],
    ]);
    expect(env(find(full, 'Deployment', named('operator'))).HEARTH_OPERATOR_WATCH_NAMESPACE).toBe(`${NAMESPACE},games`);
  });

  test('clusterWide: one ClusterRole for every kind, Secrets in every namespace and Events; no namespace Roles, no namespace list', () => {
    const objects = render([MINIMAL_VALUES], ['operator.clusterWide=true']);
    expect(find(objects, 'ClusterRole', named('operator')).rules).toEqual([...resourceRules(resourcesOf('hearth.operatorResources')), SECRETS, EVENTS]);
    expect(objects.filter((o) => o.metadata.name === named('operator-resources'))).toEqual([]);
    expect(env(find(objects, 'Deployment', named('operator')))).not.toHaveProperty('HEARTH_OPERATOR_WATCH_NAMESPACE');
  });

  test('the Lease: a Role in the release namespace only', () => {
    const role = find(minimal, 'Role', named('operator'));
    expect(role.metadata.namespace).toBe(NAMESPACE);
    expect(role.rules).toEqual([{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] }]);
    expect(find(minimal, 'RoleBinding', named('operator')).roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'hearth-operator' });
  });

  test('covers every kind `hearth apply` accepts: one resource per kind, the same plurals and scopes as the CRDs', () => {
    const all = resourcesOf('hearth.operatorResources');
    expect(all).toHaveLength(Object.keys(MANIFEST_KINDS).length);
    const crds = hearthCrdFiles().map((f) => parse(fs.readFileSync(f, 'utf8').replace(/^\{\{.*\}\}$/gm, '')).spec);
    expect(crds.length).toBeGreaterThan(0);
    expect([...all].sort()).toEqual(crds.map((c) => c.names.plural as string).sort());
    expect([...resourcesOf('hearth.operatorClusterResources')].sort()).toEqual(
      crds
        .filter((c) => c.scope === 'Cluster')
        .map((c) => c.names.plural)
        .sort(),
    );
    expect([...resourcesOf('hearth.operatorNamespacedResources')].sort()).toEqual(
      crds
        .filter((c) => c.scope === 'Namespaced')
        .map((c) => c.names.plural)
        .sort(),
    );
  });

  test('rbac.create=false leaves RBAC to the SRE', () => {
    const objects = render([MINIMAL_VALUES], ['operator.rbac.create=false']);
    expect(objects.filter((o) => /Role|AdmissionPolicy/.test(o.kind))).toEqual([]);
  });

  test("a ValidatingAdmissionPolicy narrows the operator's Secret writes to the key Secrets it owns, for its ServiceAccount only", () => {
    const policy = find(minimal, 'ValidatingAdmissionPolicy', named('operator-secrets'));
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['secrets'] },
    ]);
    expect(policy.spec.matchConditions).toEqual([
      { name: 'hearth-operator', expression: `request.userInfo.username == 'system:serviceaccount:${NAMESPACE}:hearth-operator'` },
    ]);
    expect(policy.spec.failurePolicy).toBe('Fail');
    const [update, write] = policy.spec.validations.map((v: { expression: string }) => v.expression);
    expect(update).toMatch(/^request\.operation != 'UPDATE' \|\| \(has\(oldObject\.metadata\.labels\)/);
    expect(write).toContain("object.metadata.labels['app.kubernetes.io/managed-by'] == 'hearth-operator'");
    expect(write).toContain("o.kind == 'ServerKey' || o.kind == 'LicenceKey'");
    expect(find(minimal, 'ValidatingAdmissionPolicyBinding', named('operator-secrets')).spec).toEqual({
      policyName: named('operator-secrets'),
      validationActions: ['Deny'],
    });
    // A ServiceAccount of another name is the one matched.
    const renamed = render([MINIMAL_VALUES], ['operator.serviceAccount.name=keys-bot']);
    expect(find(renamed, 'ValidatingAdmissionPolicy', named('operator-secrets')).spec.matchConditions[0].expression).toContain(
      `system:serviceaccount:${NAMESPACE}:keys-bot'`,
    );
    // Left out on request (a cluster whose admission it would not suit).
    expect(render([MINIMAL_VALUES], ['operator.rbac.secretPolicy=false']).filter((o) => /AdmissionPolicy/.test(o.kind))).toEqual([]);
  });
});

describe('monitoring and network policy', () => {
  test('the ServiceMonitor scrapes the metrics port of every component Service', () => {
    const sm = find(full, 'ServiceMonitor', 'hearth');
    expect(sm.metadata.labels?.release).toBe('prometheus');
    expect(sm.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '30s' }]);
    const selected = full.filter((o) => o.kind === 'Service' && Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => o.metadata.labels?.[k] === v));
    expect(selected.map((s) => s.metadata.name).sort()).toEqual(['hearth-api', 'hearth-crash-worker', 'hearth-operator', 'hearth-realtime']);
    for (const s of selected) expect(s.spec.ports).toContainEqual({ name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP' });
  });

  test('the PrometheusRule alerts on metrics Hearth exports, plus the extra rules', () => {
    const rules = find(full, 'PrometheusRule', 'hearth').spec.groups[0].rules;
    expect(rules.map((r: { alert: string }) => r.alert)).toEqual([
      'HearthTargetDown',
      'HearthApiServerErrors',
      'HearthApiLatencyHigh',
      'HearthRateLimitRefusalSurge',
      'HearthRealtimeSocketDrops',
      'HearthCrashQueueBacklog',
      'HearthCommerceReportStale',
      'HearthCommerceReportLagging',
      'HearthReconcileFailures',
      'HearthDependencyDown',
      'HearthRateLimitFailOpen',
      'HearthObjectsNotReady',
      'HearthObjectsNotReady',
      'HearthOperatorNoLeader',
      'HearthOperatorAbsent',
      'HearthOperatorReconcileLag',
      'HearthOperatorQueueDepth',
      'HearthOperatorRestarting',
      'HearthCleanupStuck',
      'HearthSaveWriteSurge',
    ]);
    // The operator's alerts only with an operator.
    const noOperator = find(render([FULL_VALUES], ['operator.enabled=false']), 'PrometheusRule', 'hearth').spec.groups[0].rules.map(
      (r: { alert: string }) => r.alert,
    );
    expect(noOperator).not.toContain('HearthObjectsNotReady');
    expect(noOperator).not.toContain('HearthOperatorNoLeader');
    expect(noOperator).not.toContain('HearthOperatorAbsent');
    expect(rules[1].annotations.runbook_url).toBe('https://github.com/hearth-gg/hearth/blob/main/docs/operations.md#hearthapiservererrors');
    expect(rules[1].expr).toContain(
      'hearth_http_requests_total{namespace="hearth-system", service=~"hearth-(api|realtime|crash-worker|operator)", status=~"5.."}',
    );
    expect(rules[0].annotations.description).toContain('{{ $labels.pod }}');
  });

  test('the NetworkPolicy lets out only DNS, the databases, identity providers, the store and the escape hatches; the operator also the Kubernetes API', () => {
    const np = find(full, 'NetworkPolicy', 'hearth');
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.spec.egress).toEqual([
      {
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ],
      },
      { ports: [{ port: 5432, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '10.20.0.0/16' } }] },
      { ports: [{ port: 6379, protocol: 'TCP' }] },
      // The object storage: 443 and the port of objectStorage.endpoint (https://minio.storage.svc:9000).
      {
        ports: [
          { port: 443, protocol: 'TCP' },
          { port: 9000, protocol: 'TCP' },
        ],
      },
      // Identity providers (sign-in).
      { ports: [{ port: 443, protocol: 'TCP' }] },
      // The game store (commerce's orders and report job).
      { ports: [{ port: 443, protocol: 'TCP' }] },
      // The release's own HTTP ports (the helm test Pod).
      {
        ports: [
          { port: 8080, protocol: 'TCP' },
          { port: 8081, protocol: 'TCP' },
        ],
        to: [{ podSelector: { matchLabels: np.spec.podSelector.matchLabels } }],
      },
      { to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ port: 443, protocol: 'TCP' }] },
    ]);
    // Without a store, no storage rule; identity providers can be turned off or pinned.
    const pinned = find(
      render([MINIMAL_VALUES], ['networkPolicy.enabled=true', 'networkPolicy.identityProviders.to[0].ipBlock.cidr=203.0.113.0/24']),
      'NetworkPolicy',
      'hearth',
    ).spec.egress;
    expect(pinned.map((r: { ports: { port: number }[] }) => r.ports.map((p) => p.port))).toEqual([[53, 53], [5432], [6379], [443], [443], [8080, 8081]]);
    expect(pinned[3].to).toEqual([{ ipBlock: { cidr: '203.0.113.0/24' } }]);
    expect(pinned[4].to).toBeUndefined();
    const noIdp = find(render([MINIMAL_VALUES], ['networkPolicy.enabled=true', 'networkPolicy.identityProviders.enabled=false']), 'NetworkPolicy', 'hearth')
      .spec.egress;
    expect(noIdp.map((r: { ports: { port: number }[] }) => r.ports.map((p) => p.port))).toEqual([[53, 53], [5432], [6379], [443], [8080, 8081]]);
    // The store likewise: pinned to its addresses, or off for a game that does not sell.
    const storePinned = find(
      render(
        [MINIMAL_VALUES],
        ['networkPolicy.enabled=true', 'networkPolicy.identityProviders.enabled=false', 'networkPolicy.store.to[0].ipBlock.cidr=192.0.2.0/24'],
      ),
      'NetworkPolicy',
      'hearth',
    ).spec.egress;
    expect(storePinned[3]).toEqual({ ports: [{ port: 443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '192.0.2.0/24' } }] });
    const noStore = find(
      render([MINIMAL_VALUES], ['networkPolicy.enabled=true', 'networkPolicy.identityProviders.enabled=false', 'networkPolicy.store.enabled=false']),
      'NetworkPolicy',
      'hearth',
    ).spec.egress;
    expect(noStore.map((r: { ports: { port: number }[] }) => r.ports.map((p) => p.port))).toEqual([[53, 53], [5432], [6379], [8080, 8081]]);
    const storage = find(
      render([MINIMAL_VALUES], ['networkPolicy.enabled=true', 'objectStorage.url=s3://b', 'networkPolicy.objectStorage.to[0].ipBlock.cidr=198.51.100.0/24']),
      'NetworkPolicy',
      'hearth',
    ).spec.egress;
    expect(storage[3]).toEqual({ ports: [{ port: 443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '198.51.100.0/24' } }] });
    expect(np.spec.ingress[1]).toEqual({
      ports: [{ port: 'metrics', protocol: 'TCP' }],
      from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
    });
    const operator = find(full, 'NetworkPolicy', named('operator'));
    expect(operator.spec.podSelector.matchLabels['app.kubernetes.io/component']).toBe('operator');
    expect(operator.spec.egress).toEqual([
      {
        ports: [
          { port: 443, protocol: 'TCP' },
          { port: 6443, protocol: 'TCP' },
        ],
      },
    ]);

    const open = render([FULL_VALUES], ['networkPolicy.allowExternalEgress=true']);
    expect(find(open, 'NetworkPolicy', 'hearth').spec.policyTypes).toEqual(['Ingress']);
    expect(open.some((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'hearth-operator')).toBe(false);
  });

  test("a dashboard ConfigMap per file under dashboards/, with the sidecar's label", () => {
    const cm = find(full, 'ConfigMap', 'hearth-dashboard-hearth-overview');
    expect(cm.metadata.labels?.grafana_dashboard).toBe('1');
    expect(cm.metadata.annotations).toEqual({ grafana_folder: 'Hearth' });
    const dashboard = JSON.parse(cm.data['hearth-overview.json']);
    expect(dashboard).toMatchObject({ uid: 'hearth-overview', title: `Hearth overview (${NAMESPACE}/hearth)` });
    // Everything else is the file's, but the variables the release sets: its Services' prefix (the
    // file's default, for a release named hearth) and the namespace picked at first.
    const file = JSON.parse(fs.readFileSync(path.join(CHART, 'dashboards', 'hearth-overview.json'), 'utf8'));
    const namespaceVar = dashboard.templating.list.find((v: { name: string }) => v.name === 'namespace');
    expect(namespaceVar.current).toEqual({ text: [NAMESPACE], value: [NAMESPACE] });
    namespaceVar.current = {};
    expect({ ...dashboard, uid: file.uid, title: file.title }).toEqual(file);
  });

  test("two releases' dashboards can share a Grafana: uids and titles name the release (uids within Grafana's 40 characters)", () => {
    const dashboardsOf = (release: string) =>
      parseObjects(runOk(kubeToolPath('helm'), ['template', release, CHART, '--namespace', NAMESPACE, '--kube-version', KUBE_VERSION, '--values', FULL_VALUES]))
        .filter((o) => o.kind === 'ConfigMap' && o.metadata.name.includes('-dashboard-'))
        .map((cm) => JSON.parse(Object.values(cm.data as Record<string, string>)[0]) as { uid: string; title: string });
    const blue = dashboardsOf('blue');
    const green = dashboardsOf('green-with-a-rather-long-release-name');
    expect(blue.map((d) => d.uid).sort()).toEqual([
      'blue-hearth-api',
      'blue-hearth-economy',
      'blue-hearth-operator',
      'blue-hearth-overview',
      'blue-hearth-realtime',
      'blue-hearth-workers',
    ]);
    for (const d of green) expect(d.uid.length).toBeLessThanOrEqual(40);
    const uids = [...blue, ...green].map((d) => d.uid);
    expect(new Set(uids).size).toBe(uids.length);
    const titles = [...blue, ...green].map((d) => d.title);
    expect(new Set(titles).size).toBe(titles.length);
  });
});

describe('crash reports: object storage and the crash workers', () => {
  const STORAGE_VARS = ['OBJECT_STORAGE_URL', 'S3_ENDPOINT', 'S3_REGION', 'S3_FORCE_PATH_STYLE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];
  const storageEnv = (objects: KubeObject[], component: string) =>
    Object.fromEntries(Object.entries(env(find(objects, 'Deployment', named(component)))).filter(([name]) => STORAGE_VARS.includes(name)));

  test('no storage URL: no storage variables (the API answers the crash routes 503) and no crash worker, which could only crash-loop without a store', () => {
    expect(storageEnv(minimal, 'api')).toEqual({});
    expect(minimal.filter((o) => o.metadata.name === named('crash-worker'))).toEqual([]);
    // Even with every crash-worker knob on: a store is what it needs.
    const knobs = render([MINIMAL_VALUES], ['crashWorker.autoscaling.enabled=true', 'crashWorker.pdb.enabled=true']);
    expect(knobs.filter((o) => o.metadata.name === named('crash-worker'))).toEqual([]);
    // The chart's defaults alone (the credentials from existing Secrets) render no worker either.
    const defaults = render([], ['database.existingSecret=db', 'redis.existingSecret=r', 'masterKey.existingSecret=k']);
    expect(
      defaults
        .filter((o) => o.kind === 'Deployment')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual([named('api'), named('operator'), named('realtime')]);
  });

  test('every crash worker the chart renders has OBJECT_STORAGE_URL, the one variable it cannot start without', () => {
    for (const objects of [full, render([MINIMAL_VALUES], ['objectStorage.url=s3://b'])]) {
      expect(env(find(objects, 'Deployment', named('crash-worker'))).OBJECT_STORAGE_URL).toMatch(/^s3:\/\//);
    }
  });

  test('with a store the crash workers run by default, with the credentials they read', () => {
    const worker = find(render([MINIMAL_VALUES], ['objectStorage.url=s3://b']), 'Deployment', named('crash-worker'));
    expect(container(worker).args).toEqual(['crash-worker']);
    // The master key: the commerce report job the workers run opens the publisher keys the operator sealed.
    expect(Object.keys(env(worker)).sort()).toEqual([
      'DATABASE_URL',
      'HEARTH_MASTER_KEY',
      'LOG_LEVEL',
      'METRICS_PORT',
      'OBJECT_STORAGE_URL',
      'REDIS_PREFIX',
      'S3_FORCE_PATH_STYLE',
      'S3_REGION',
    ]);
    expect(env(worker).METRICS_PORT).toBe('9090');
    expect(worker.spec.replicas).toBe(1);
    expect(minimal.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).not.toContain(named('object-storage'));
  });

  test('an S3 store with a key pair from the values: one Secret, the same variables in the API and the crash workers, none elsewhere', () => {
    const objects = render(
      [MINIMAL_VALUES],
      [
        'objectStorage.url=s3://hearth-crashes/prod',
        'objectStorage.endpoint=https://minio.storage.svc:9000',
        'objectStorage.forcePathStyle=true',
        'objectStorage.region=eu-west-1',
        'objectStorage.credentials.accessKeyId=AKIAEXAMPLE',
        'objectStorage.credentials.secretAccessKey=s3cret',
      ],
    );
    const secret = find(objects, 'Secret', named('object-storage'));
    expect(secret.stringData).toEqual({ 'access-key-id': 'AKIAEXAMPLE', 'secret-access-key': 's3cret' });
    const ref = (key: string) => ({ secretKeyRef: { name: named('object-storage'), key } });
    const expected = {
      OBJECT_STORAGE_URL: 's3://hearth-crashes/prod',
      S3_ENDPOINT: 'https://minio.storage.svc:9000',
      S3_REGION: 'eu-west-1',
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: ref('access-key-id'),
      AWS_SECRET_ACCESS_KEY: ref('secret-access-key'),
    };
    expect(storageEnv(objects, 'api')).toEqual(expected);
    expect(storageEnv(objects, 'crash-worker')).toEqual(expected);
    for (const component of ['realtime', 'operator']) expect(storageEnv(objects, component)).toEqual({});
    // A changed key rolls the pods (the Secret is in the checksum).
    const rolled = render(
      [MINIMAL_VALUES],
      ['objectStorage.url=s3://hearth-crashes/prod', 'objectStorage.credentials.accessKeyId=OTHER', 'objectStorage.credentials.secretAccessKey=s3cret'],
    );
    const checksum = (o: KubeObject[]) => find(o, 'Deployment', named('crash-worker')).spec.template.metadata.annotations['checksum/secrets'];
    expect(checksum(rolled)).not.toBe(checksum(objects));
  });

  test('a key pair from an existing Secret: read under its keys, no Secret written; no key pair at all: the SDK default chain (no AWS variables)', () => {
    const existing = render(
      [MINIMAL_VALUES],
      [
        'objectStorage.url=s3://b',
        'objectStorage.credentials.existingSecret=s3-keys',
        'objectStorage.credentials.accessKeyIdKey=id',
        'objectStorage.credentials.secretAccessKeyKey=secret',
      ],
    );
    expect(existing.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).not.toContain(named('object-storage'));
    expect(storageEnv(existing, 'crash-worker')).toEqual({
      OBJECT_STORAGE_URL: 's3://b',
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'false',
      AWS_ACCESS_KEY_ID: { secretKeyRef: { name: 's3-keys', key: 'id' } },
      AWS_SECRET_ACCESS_KEY: { secretKeyRef: { name: 's3-keys', key: 'secret' } },
    });
    expect(storageEnv(render([MINIMAL_VALUES], ['objectStorage.url=s3://b']), 'api')).toEqual({
      OBJECT_STORAGE_URL: 's3://b',
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'false',
    });
    const half = helm(templateArgs([MINIMAL_VALUES], ['objectStorage.url=s3://b', 'objectStorage.credentials.accessKeyId=AK']));
    expect(half.status).not.toBe(0);
    expect(half.stderr).toContain('objectStorage.credentials.secretAccessKey is required');
  });

  test('queue-depth scaling is off by default; on, a KEDA ScaledObject counts the waiting crash-upload jobs and owns the replica count', () => {
    expect(minimal.filter((o) => o.kind === 'ScaledObject')).toEqual([]);
    const objects = render(
      [MINIMAL_VALUES],
      [
        'objectStorage.url=s3://b',
        'crashWorkerQueueScaling.enabled=true',
        'crashWorkerQueueScaling.maxReplicas=20',
        'crashWorkerQueueScaling.jobsPerReplica=50',
      ],
    );
    const scaled = find(objects, 'ScaledObject', named('crash-worker'));
    expect(scaled.apiVersion).toBe('keda.sh/v1alpha1');
    expect(scaled.spec).toMatchObject({ scaleTargetRef: { name: named('crash-worker') }, minReplicaCount: 1, maxReplicaCount: 20 });
    expect(scaled.spec.triggers).toEqual([
      {
        type: 'postgresql',
        metadata: {
          connectionFromEnv: 'DATABASE_URL',
          query: CRASH_QUEUE_DEPTH_SQL, // the query test/crashes/uploads.test.ts runs against the real queue
          targetQueryValue: '50',
          activationTargetQueryValue: '0',
        },
      },
    ]);
    // The connection KEDA reads is the worker container's own variable.
    expect(env(find(objects, 'Deployment', named('crash-worker')))).toHaveProperty('DATABASE_URL');
    expect(find(objects, 'Deployment', named('crash-worker')).spec).not.toHaveProperty('replicas');
    expect(objects.filter((o) => o.kind === 'HorizontalPodAutoscaler').map((o) => o.metadata.name)).toEqual([named('api')]);
    const both = helm(
      templateArgs([MINIMAL_VALUES], ['objectStorage.url=s3://b', 'crashWorkerQueueScaling.enabled=true', 'crashWorker.autoscaling.enabled=true']),
    );
    expect(both.status).not.toBe(0);
    expect(both.stderr).toContain('crashWorker.autoscaling and crashWorkerQueueScaling both scale the crash workers');
  });
});

describe('as a subchart', () => {
  test("a parent chart's `global` values pass the schema (helm template of a parent that depends on charts/hearth)", () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-parent-'));
    try {
      fs.mkdirSync(path.join(parent, 'charts'));
      fs.cpSync(CHART, path.join(parent, 'charts', 'hearth'), { recursive: true });
      fs.writeFileSync(
        path.join(parent, 'Chart.yaml'),
        'apiVersion: v2\nname: games-platform\nversion: 1.0.0\ndependencies:\n  - name: hearth\n    version: ">=0.0.0-0"\n',
      );
      fs.writeFileSync(
        path.join(parent, 'values.yaml'),
        [
          'global:',
          '  imageRegistry: registry.example.com',
          '  storageClass: fast',
          'hearth:',
          ...fs
            .readFileSync(MINIMAL_VALUES, 'utf8')
            .split('\n')
            .filter((l) => l && !l.startsWith('#'))
            .map((l) => `  ${l}`),
        ].join('\n') + '\n',
      );
      const res = helm(['template', 'platform', parent, '--namespace', NAMESPACE, '--kube-version', KUBE_VERSION]);
      expect(res.stderr).toBe('');
      expect(res.status).toBe(0);
      expect(parseObjects(res.stdout).some((o) => o.kind === 'Deployment' && o.metadata.name === 'platform-hearth-api')).toBe(true);
    } finally {
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });
});

describe('disruption budgets never block a node drain', () => {
  const pdbs = (sets: string[]) =>
    Object.fromEntries(
      render([MINIMAL_VALUES], sets)
        .filter((o) => o.kind === 'PodDisruptionBudget')
        .map((o) => [o.metadata.name, o.spec]),
    );

  test('a minAvailable budget is written only while the fewest pods exceed it', () => {
    // api: HPA minimum 2; realtime and operator: 2 replicas. Each budget allows one disruption.
    expect(Object.keys(pdbs([])).sort()).toEqual([named('api'), named('operator'), named('realtime')]);
    // One pod each: minAvailable 1 would allow no disruption, so there is no budget.
    expect(pdbs(['api.autoscaling.minReplicas=1', 'realtime.replicas=1', 'operator.replicas=1'])).toEqual({});
    // The HPA's minimum while it scales the API; replicas once it does not.
    expect(Object.keys(pdbs(['api.autoscaling.minReplicas=2']))).toContain(named('api'));
    expect(Object.keys(pdbs(['api.autoscaling.enabled=false', 'api.replicas=1']))).not.toContain(named('api'));
    // A percentage counts like the controller does (rounded up): 50% of 2 keeps 1, allows 1; 60% of 2 keeps 2.
    expect(pdbs(['realtime.pdb.minAvailable=50%'])[named('realtime')]).toMatchObject({ minAvailable: '50%' });
    expect(pdbs(['realtime.pdb.minAvailable=60%'])).not.toHaveProperty(named('realtime'));
    // The crash worker's one pod (with a store): no budget even with pdb.enabled; KEDA's minimum 0 neither.
    const store = ['objectStorage.url=s3://b', 'crashWorker.pdb.enabled=true'];
    expect(pdbs(store)).not.toHaveProperty(named('crash-worker'));
    expect(pdbs([...store, 'crashWorker.replicas=3'])[named('crash-worker')]).toMatchObject({ minAvailable: 1 });
    expect(pdbs([...store, 'crashWorkerQueueScaling.enabled=true', 'crashWorkerQueueScaling.minReplicas=0'])).not.toHaveProperty(named('crash-worker'));
  });

  test('maxUnavailable replaces minAvailable and holds at any size, one pod included', () => {
    const one = pdbs(['realtime.replicas=1', 'realtime.pdb.maxUnavailable=1']);
    expect(one[named('realtime')]).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: find(minimal, 'Deployment', named('realtime')).spec.selector.matchLabels },
    });
    expect(find(full, 'PodDisruptionBudget', named('api')).spec).toMatchObject({ maxUnavailable: '25%' });
    expect(find(full, 'PodDisruptionBudget', named('api')).spec).not.toHaveProperty('minAvailable');
  });

  test('a budget of no disruption is refused by the schema (maxUnavailable 0)', () => {
    const res = helm(templateArgs([MINIMAL_VALUES], ['api.pdb.maxUnavailable=0']));
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain("at '/api/pdb/maxUnavailable'");
  });
});

describe('readiness, startup and draining', () => {
  test('a startupProbe on /readyz; a preStop pause on the API and the socket, inside a grace period that leaves the process its 25 s', () => {
    for (const component of ['api', 'realtime']) {
      const d = find(minimal, 'Deployment', named(component));
      expect(container(d).startupProbe).toEqual({ httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 2, failureThreshold: 30 });
      expect(container(d).lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
      expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(5 + 25);
    }
    for (const component of ['operator'])
      expect(container(find(minimal, 'Deployment', named(component))).startupProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(container(find(minimal, 'Deployment', named('operator')))).not.toHaveProperty('lifecycle');
    const none = render([MINIMAL_VALUES], ['api.startupProbe=null', 'api.lifecycle=null']);
    expect(container(find(none, 'Deployment', named('api')))).not.toHaveProperty('startupProbe');
    expect(container(find(none, 'Deployment', named('api')))).not.toHaveProperty('lifecycle');
  });
});

describe('knobs for managed databases and platform conventions', () => {
  test('initContainers and strategy per component', () => {
    const api = find(full, 'Deployment', named('api'));
    expect(api.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    expect(api.spec.template.spec.initContainers.map((c: { name: string }) => c.name)).toEqual(['wait-for-database']);
    expect(find(full, 'Deployment', named('realtime')).spec).not.toHaveProperty('strategy');
    expect(find(full, 'Deployment', named('realtime')).spec.template.spec).not.toHaveProperty('initContainers');
  });

  test('commonLabels on every object and pod, never in a selector', () => {
    for (const o of full.filter((x) => x.kind !== 'CustomResourceDefinition')) {
      expect({ object: `${o.kind}/${o.metadata.name}`, label: o.metadata.labels?.['example.com/cost-centre'] }).toEqual({
        object: `${o.kind}/${o.metadata.name}`,
        label: 'games',
      });
    }
    for (const d of full.filter((o) => o.kind === 'Deployment')) {
      expect(d.spec.template.metadata.labels['example.com/cost-centre']).toBe('games');
      expect(d.spec.selector.matchLabels).not.toHaveProperty('example.com/cost-centre');
    }
  });

  test('image.digest pins every container, the test Pod included, by digest', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const objects = render([MINIMAL_VALUES], [`image.digest=${digest}`]);
    const images = objects
      .flatMap((o) => (o.kind === 'Pod' ? o.spec.containers : (o.spec?.template?.spec?.containers ?? [])))
      .map((c: { image: string }) => c.image);
    expect(images.length).toBeGreaterThanOrEqual(5);
    for (const image of images) expect(image).toBe(`ghcr.io/hearth-gg/hearth@${digest}`);
    const bad = helm(templateArgs([MINIMAL_VALUES], ['image.digest=latest']));
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain("at '/image/digest'");
  });

  test('the helm test Pod asks the Services, under the same pod security, and is a test hook', () => {
    const pod = find(minimal, 'Pod', named('test'));
    expect(pod.metadata.annotations).toEqual({ 'helm.sh/hook': 'test', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
    const c = pod.spec.containers[0];
    expect(c.args.slice(1)).toEqual(['http://hearth-api:80/readyz', 'http://hearth-api:80/v1/.well-known/jwks.json', 'http://hearth-realtime:80/readyz']);
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(render([MINIMAL_VALUES], ['tests.enabled=false']).some((o) => o.kind === 'Pod')).toBe(false);
  });
});

describe('the socket through the Gateway API', () => {
  test('an HTTPRoute for the socket path to the realtime Service, with no affinity', () => {
    const route = find(full, 'HTTPRoute', named('realtime'));
    expect(route.apiVersion).toBe('gateway.networking.k8s.io/v1');
    expect(route.spec).toEqual({
      parentRefs: [{ name: 'public', namespace: 'gateways', sectionName: 'https' }],
      hostnames: ['api.hearth.example.com'],
      rules: [{ matches: [{ path: { type: 'Exact', value: '/v1/realtime/socket' } }], backendRefs: [{ name: 'hearth-realtime', port: 80 }] }],
    });
    expect(minimal.some((o) => o.kind === 'HTTPRoute')).toBe(false);
    const orphan = helm(templateArgs([MINIMAL_VALUES], ['realtime.httpRoute.enabled=true']));
    expect(orphan.status).not.toBe(0);
    expect(orphan.stderr).toContain('realtime.httpRoute.parentRefs needs the Gateway');
  });
});

describe("the store's publisher key for a single-project install", () => {
  const storeVolume = (objects: KubeObject[], component: string) => {
    const pod = find(objects, 'Deployment', named(component)).spec.template.spec;
    return {
      volumes: pod.volumes.filter((v: { name: string }) => v.name === 'store-publisher-key'),
      mounts: pod.containers[0].volumeMounts.filter((m: { name: string }) => m.name === 'store-publisher-key'),
    };
  };

  test('none by default: no volume in any pod', () => {
    for (const component of ['api', 'realtime', 'operator']) expect(storeVolume(minimal, component)).toEqual({ volumes: [], mounts: [] });
  });

  test('an existing Secret is mounted read-only where the API reads a secretRef, into the API and the crash workers only, with no variable carrying the key', () => {
    const objects = render([MINIMAL_VALUES], ['store.publisherKey.existingSecret=steam-publisher', 'objectStorage.url=s3://b']);
    const expected = {
      volumes: [{ name: 'store-publisher-key', secret: { secretName: 'steam-publisher' } }],
      mounts: [{ name: 'store-publisher-key', mountPath: `/var/run/hearth/store-secrets/${NAMESPACE}/steam-publisher`, readOnly: true }],
    };
    expect(storeVolume(objects, 'api')).toEqual(expected);
    expect(storeVolume(objects, 'crash-worker')).toEqual(expected);
    for (const component of ['realtime', 'operator']) expect(storeVolume(objects, component)).toEqual({ volumes: [], mounts: [] });
    // The whole Secret (no subPath): a rotated key reaches the file without a restart.
    expect(JSON.stringify(objects)).not.toContain('subPath');
    expect(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).not.toContain('steam-publisher');
  });

  test('a Secret name that is not a Kubernetes name is refused by the schema', () => {
    const res = helm(templateArgs([MINIMAL_VALUES], ['store.publisherKey.existingSecret=Not_A_Name']));
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain("at '/store/publisherKey/existingSecret'");
  });
});

describe('a replica count is never silently ignored', () => {
  const replicas = (objects: KubeObject[]) =>
    Object.fromEntries(objects.filter((o) => o.kind === 'Deployment').map((o) => [o.metadata.name, o.spec.replicas ?? 'HPA']));
  const refusal = (sets: string[]) => {
    const res = helm(templateArgs([MINIMAL_VALUES], sets));
    expect(res.status).not.toBe(0);
    return res.stderr;
  };

  test('the defaults render the counts they always did: the API sized by its HPA (2 to 10), realtime and the operator 2, the crash worker 1', () => {
    expect(replicas(minimal)).toEqual({ [named('api')]: 'HPA', [named('realtime')]: 2, [named('operator')]: 2 });
    expect(find(minimal, 'HorizontalPodAutoscaler', named('api')).spec).toMatchObject({ minReplicas: 2, maxReplicas: 10 });
    expect(replicas(render([MINIMAL_VALUES], ['objectStorage.url=s3://b']))[named('crash-worker')]).toBe(1);
    // Autoscaling off: the chart's count, or the one set.
    expect(replicas(render([MINIMAL_VALUES], ['api.autoscaling.enabled=false']))[named('api')]).toBe(2);
    expect(replicas(render([MINIMAL_VALUES], ['api.autoscaling.enabled=false', 'api.replicas=3', 'realtime.replicas=0']))).toMatchObject({
      [named('api')]: 3,
      [named('realtime')]: 0,
    });
    // null is the default, said explicitly.
    expect(replicas(render([MINIMAL_VALUES], ['api.replicas=null']))[named('api')]).toBe('HPA');
  });

  test('api.replicas with the HPA on is refused, naming what sizes the API instead', () => {
    expect(refusal(['api.replicas=3'])).toContain(
      'api.replicas is 3, but api.autoscaling is on and decides the number of api pods: remove api.replicas (null) and size them with api.autoscaling.minReplicas and maxReplicas, or turn api.autoscaling off',
    );
  });

  test("so is realtime.replicas with its HPA on, and the crash worker's with its HPA or KEDA's queue scaling", () => {
    expect(refusal(['realtime.autoscaling.enabled=true', 'realtime.replicas=4'])).toContain('realtime.replicas is 4, but realtime.autoscaling is on');
    const store = 'objectStorage.url=s3://b';
    expect(refusal([store, 'crashWorker.autoscaling.enabled=true', 'crashWorker.replicas=2'])).toContain(
      'crashWorker.replicas is 2, but crashWorker.autoscaling is on',
    );
    expect(refusal([store, 'crashWorkerQueueScaling.enabled=true', 'crashWorker.replicas=2'])).toContain(
      'crashWorker.replicas is 2, but crashWorkerQueueScaling is on',
    );
    // Their scalers on without a count: rendered, the Deployments naming none.
    const scaled = render([MINIMAL_VALUES], [store, 'realtime.autoscaling.enabled=true', 'crashWorkerQueueScaling.enabled=true']);
    expect(replicas(scaled)).toMatchObject({ [named('realtime')]: 'HPA', [named('crash-worker')]: 'HPA' });
  });
});

describe('releases that share a cluster: the CRDs and the Plans', () => {
  const crds = (objects: KubeObject[]) => objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name);
  const planOwner = (objects: KubeObject[]) => env(find(objects, 'Deployment', named('operator'))).HEARTH_OPERATOR_PLAN_OWNER;
  const planRules = (objects: KubeObject[]) =>
    (find(objects, 'ClusterRole', named('operator')).rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[])
      .filter((r) => r.apiGroups.includes('hearth.gg'))
      .flatMap((r) => r.resources.filter((res) => res.startsWith('plans')).map((res) => `${res}: ${r.verbs.join(',')}`));

  test('with no cluster to look in (helm template), every CRD renders and the operator owns the Plans', () => {
    expect(crds(minimal)).toHaveLength(Object.keys(MANIFEST_KINDS).length);
    expect(planOwner(minimal)).toBe('true');
    expect(planRules(minimal)).toEqual(['plans: get,list,watch,update,patch', 'plans/status: get,update,patch', 'plans/finalizers: update']);
  });

  test('a follower (statusOwner false) may only read Plans: RBAC itself keeps it from writing their status or finalizer', () => {
    for (const extra of [[], ['operator.clusterWide=true']]) {
      const follower = render([MINIMAL_VALUES], ['operator.plans.statusOwner=false', ...extra]);
      expect(planOwner(follower)).toBe('false');
      expect(planRules(follower)).toEqual(['plans: get,list,watch']);
      // The CRDs are still this release's to install: ownership of the Plans is a separate choice.
      expect(crds(follower)).toHaveLength(Object.keys(MANIFEST_KINDS).length);
    }
    // Cluster-wide, the namespaced kinds keep every verb.
    const rules = find(render([MINIMAL_VALUES], ['operator.plans.statusOwner=false', 'operator.clusterWide=true']), 'ClusterRole', named('operator')).rules;
    expect(rules[0]).toMatchObject({ apiGroups: ['hearth.gg'], verbs: ['get', 'list', 'watch', 'update', 'patch'] });
    expect(rules[0].resources).toContain('projects');
    expect(rules[0].resources).not.toContain('plans');
  });

  test('crds.install off: no CRD, and the operator follows unless told to own the Plans (NOTES.txt says so: shared-cluster.test.ts)', () => {
    const off = render([MINIMAL_VALUES], ['crds.install=false']);
    expect(crds(off)).toEqual([]);
    expect(planOwner(off)).toBe('false');
    const owning = render([MINIMAL_VALUES], ['crds.install=false', 'operator.plans.statusOwner=true']);
    expect(planOwner(owning)).toBe('true');
    expect(planRules(owning)).toContain('plans/status: get,update,patch');
  });
});

describe('dashboards select one release', () => {
  const SERVICES = '(api|realtime|crash-worker|operator)';
  const dashboardsOf = (release: string) =>
    parseObjects(runOk(kubeToolPath('helm'), ['template', release, CHART, '--namespace', 'games', '--kube-version', KUBE_VERSION, '--values', FULL_VALUES]))
      .filter((o) => o.kind === 'ConfigMap' && o.metadata.name.includes('-dashboard-'))
      .map((cm) => JSON.parse(Object.values(cm.data as Record<string, string>)[0]) as { title: string; templating: { list: any[] }; panels: any[] });
  /** Every PromQL expression of a dashboard, rows' panels included. */
  const expressions = (d: { panels: any[] }): string[] =>
    d.panels.flatMap((p) => [...(p.targets ?? []).map((t: { expr: string }) => t.expr), ...expressions({ panels: p.panels ?? [] })]);
  /** Every selector `{…}` of a PromQL expression (not `by (…)` groupings, not `[5m]` windows). */
  const selectors = (expr: string) => [...expr.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);

  test("every selector of every dashboard query names the namespace and the release's Services; the release constant is the release's", () => {
    const dashboards = dashboardsOf('blue');
    expect(dashboards).toHaveLength(fs.readdirSync(path.join(CHART, 'dashboards')).length);
    let count = 0;
    for (const d of dashboards) {
      const exprs = expressions(d);
      expect(exprs.length).toBeGreaterThan(0);
      for (const expr of exprs) {
        const found = selectors(expr);
        expect(found.length).toBeGreaterThan(0);
        for (const selector of found) {
          count += 1;
          expect({ title: d.title, selector }).toEqual({
            title: d.title,
            selector: expect.stringContaining(`namespace=~"$namespace", service=~"$release-${SERVICES}"`),
          });
        }
      }
      const variables = Object.fromEntries(d.templating.list.map((v) => [v.name, v]));
      expect(variables.release).toMatchObject({ type: 'constant', query: 'blue-hearth', current: { value: 'blue-hearth' }, hide: 2 });
      expect(variables.namespace.current).toEqual({ text: ['games'], value: ['games'] });
      // The namespace picker offers the namespaces this release runs in.
      expect(variables.namespace.query.query).toBe(`label_values(up{service=~"$release-${SERVICES}"}, namespace)`);
    }
    expect(count).toBeGreaterThan(70);
  });

  test("so two releases in one namespace each see their own: the selector of one does not match the other's Services", () => {
    const serviceRegex = (release: string) => new RegExp(`^${dashboardsOf(release)[0].templating.list.find((v) => v.name === 'release').query}-${SERVICES}$`);
    const hearth = serviceRegex('hearth');
    expect(hearth.test('hearth-api')).toBe(true);
    // A release named hearth-staging: its Services start with "hearth-" too, and are not the first release's.
    expect(hearth.test('hearth-staging-api')).toBe(false);
    expect(serviceRegex('hearth-staging').test('hearth-staging-operator')).toBe(true);
  });
});
