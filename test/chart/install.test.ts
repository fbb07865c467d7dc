/**
 * The chart installed for real: `helm install`, `helm upgrade` and `helm uninstall` of charts/hearth,
 * hooks included, on a real kube-apiserver + etcd with kube-controller-manager beside them
 * (test/support/kube.ts, `controllers: true`), in a namespace that enforces the `restricted` Pod
 * Security level. The controllers do what a cluster does with the release: Deployments make
 * ReplicaSets and Pods (admitted or refused by PodSecurity), the migrations hook Job makes its Pod,
 * deleted owners' objects are garbage-collected, a deleted namespace goes.
 *
 * No scheduler and no kubelet run (and no image is pulled), so no container starts: the test plays
 * the kubelet's one part helm waits for, the end of the migrations Pod. It writes that Pod's status
 * `Succeeded` through the status subresource, as a kubelet reports an exit code 0, and the real Job
 * controller completes the Job from it; helm then goes on exactly as in a cluster.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Kube, kubeToolPath, startKube } from '../support/kube';
import { runCollected } from '../support/processes';
import { CHART, KUBE_VERSION, type KubeObject, type RunResult, kubectl } from './chart';

const NS = 'hearth-live';
const RELEASE = 'live';
const MIGRATIONS_JOB = `${RELEASE}-hearth-migrations`;
/** Every wait of this suite ends by then: a controller that never acts fails the test, it does not hang it. */
const WAIT_MS = 60_000;

let kube: Kube;
let workDir = '';
let valuesFile = '';

function kubectlOk(args: string[], input?: string): string {
  const res = kubectl(kube.kubeconfig, args, input);
  if (res.status !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${res.status}:\n${res.stderr}${res.stdout}`);
  return res.stdout;
}

const getJson = (args: string[]) => JSON.parse(kubectlOk(['get', ...args, '-o', 'json'])) as KubeObject;
const listIn = (kind: string, selector?: string): KubeObject[] => getJson([kind, '-n', NS, ...(selector ? ['-l', selector] : [])]).items as KubeObject[];

async function kubectlAsync(args: string[]): Promise<string> {
  const res = await runCollected(kubeToolPath('kubectl'), ['--kubeconfig', kube.kubeconfig, ...args], { timeoutMs: 30_000 });
  if (res.status !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${res.status}:\n${res.stderr}`);
  return res.stdout;
}

/** Polls `probe` every 500 ms until it returns a value other than undefined; fails after WAIT_MS saying what it waited for. */
async function eventually<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`still waiting after ${WAIT_MS} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The kubelet's part for the migrations hook: each Pod the Job controller makes for the Job is
 * reported ended with exit code 0 (phase Succeeded, its container terminated). Records which Jobs
 * (by uid) and Pods it saw, so a test can count hook runs.
 */
class MigrationsKubelet {
  readonly jobUids = new Set<string>();
  readonly podNames = new Set<string>();
  private running = true;
  private readonly loop: Promise<void>;

  constructor() {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const pods = JSON.parse(await kubectlAsync(['get', 'pods', '-n', NS, '-l', `batch.kubernetes.io/job-name=${MIGRATIONS_JOB}`, '-o', 'json']))
        .items as KubeObject[];
      for (const pod of pods) {
        this.podNames.add(pod.metadata.name);
        for (const owner of pod.metadata.ownerReferences ?? []) {
          if (owner.kind === 'Job') this.jobUids.add(owner.uid);
        }
        if (pod.status?.phase === 'Succeeded' || pod.metadata.deletionTimestamp) continue;
        const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
        const status = {
          phase: 'Succeeded',
          conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: now }],
          containerStatuses: pod.spec.containers.map((c: { name: string; image: string }) => ({
            name: c.name,
            image: c.image,
            imageID: '',
            ready: false,
            restartCount: 0,
            started: false,
            state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now } },
          })),
        };
        await kubectlAsync(['patch', 'pod', pod.metadata.name, '-n', NS, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]).catch(
          (err: Error) => {
            // Gone since the listing (its Job deleted): nothing left to report for it.
            if (!/NotFound/.test(err.message)) throw err;
          },
        );
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/** `helm <verb>` of the release in NS while the kubelet stand-in ends the hook Pods; returns its output and the Jobs seen. */
async function helmWithHooks(args: string[]): Promise<{ res: RunResult; kubelet: MigrationsKubelet }> {
  const kubelet = new MigrationsKubelet();
  try {
    const res = await runCollected(kubeToolPath('helm'), [...args, '--kubeconfig', kube.kubeconfig, '--namespace', NS, '--timeout', '120s'], {
      timeoutMs: 180_000,
    });
    return { res, kubelet };
  } finally {
    await kubelet.stop();
  }
}

const helmOk = (res: RunResult) => {
  if (res.status !== 0) throw new Error(`helm exited ${res.status}:\n${res.stderr}${res.stdout}`);
  return res.stdout;
};

/** The uids of the migrations Jobs the Job controller reported Completed (an Event each), once there are `count` (events are written a moment after the condition helm waits for). */
const jobsCompleted = (count: number) =>
  eventually(`${count} Completed event(s) of ${MIGRATIONS_JOB}`, () => {
    const uids = listIn('events')
      .filter((e) => e.involvedObject.kind === 'Job' && e.involvedObject.name === MIGRATIONS_JOB && e.reason === 'Completed')
      .map((e) => e.involvedObject.uid as string)
      .sort();
    return uids.length >= count ? uids : undefined;
  });

const releaseDeployments = () => listIn('deployments', `app.kubernetes.io/instance=${RELEASE}`);
const ownedBy = (o: KubeObject, owner: KubeObject) => (o.metadata.ownerReferences ?? []).some((r) => r.uid === owner.metadata.uid);

/** A Plan (cluster-scoped), for the schema checks: the docs' example plus `extra` spec fields. */
const plan = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: 'hearth.gg/v1alpha1',
    kind: 'Plan',
    metadata: { name },
    spec: {
      playersPerEnvironment: 1000,
      playerDataBytesPerEnvironment: 1073741824,
      serverKeysPerEnvironment: 5,
      requestsPerMinutePerEnvironment: 6000,
      requestsPerMinutePerCredential: 600,
      requestsPerDayPerEnvironment: 2000000,
      sessionSeats: 16,
      realtime: { maxMessageBytes: 4096, messagesPerSecond: 10, messagesPerMinute: 300, maxSubscriptions: 10 },
      licenceSeats: 2,
      ...extra,
    },
  });

beforeAll(async () => {
  kube = await startKube({ controllers: true });
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-install-'));
  kubectlOk(['create', 'namespace', NS]);
  kubectlOk(['label', 'namespace', NS, 'pod-security.kubernetes.io/enforce=restricted']);
  // As an SRE would install it (docs/kubernetes.md "Install"): one credential from a Secret made
  // beforehand, the others written by the chart; databases nobody can reach (no pod runs here).
  kubectlOk(['create', 'secret', 'generic', 'hearth-redis', '-n', NS, '--from-literal=url=redis://redis.databases.svc:6379']);
  valuesFile = path.join(workDir, 'hearth-values.yaml');
  fs.writeFileSync(
    valuesFile,
    [
      'image: { repository: registry.example.com/hearth, tag: "0.1.0" }',
      'database: { url: "postgres://hearth:secret@postgres.databases.svc:5432/hearth" }',
      'redis: { existingSecret: hearth-redis }',
      'masterKey: { value: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef }',
      'ingress: { enabled: true, className: nginx, hosts: [api.hearth.example.com] }',
      '',
    ].join('\n'),
  );
  // The serviceaccount controller gives the new namespace its `default` ServiceAccount, which the
  // ServiceAccount admission plugin requires of the hook and Deployment pods.
  await eventually('the default ServiceAccount of the namespace', () =>
    kubectl(kube.kubeconfig, ['get', 'serviceaccount', 'default', '-n', NS]).status === 0 ? true : undefined,
  );
}, 150_000);

afterAll(async () => {
  await kube?.stop();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

test("the test API server reports its real version, which the chart's kubeVersion accepts", () => {
  // What helm reads to check kubeVersion (`kubectl version` would also print kubectl's own, unstamped, and exit 1).
  const serverVersion = JSON.parse(kubectlOk(['get', '--raw', '/version'])) as { gitVersion: string; major: string; minor: string };
  expect(serverVersion).toMatchObject({ gitVersion: `v${KUBE_VERSION}`, major: '1', minor: '34' });
  expect(fs.readFileSync(path.join(CHART, 'Chart.yaml'), 'utf8')).toMatch(/^kubeVersion: ">=1\.30\.0-0"$/m);
});

describe('helm install, upgrade and uninstall with hooks, on an API server with its controllers', () => {
  let installed: { res: RunResult; kubelet: MigrationsKubelet };

  beforeAll(async () => {
    installed = await helmWithHooks(['install', RELEASE, CHART, '--values', valuesFile]);
  }, 180_000);

  test('the release installs: the migrations hook Job ran once, was completed by the Job controller, then deleted with its Pod', async () => {
    helmOk(installed.res);
    const status = JSON.parse(
      helmOk(
        await runCollected(kubeToolPath('helm'), ['status', RELEASE, '-o', 'json', '--kubeconfig', kube.kubeconfig, '--namespace', NS], { timeoutMs: 180_000 }),
      ),
    ) as { info: { status: string } };
    expect(status.info.status).toBe('deployed');
    expect(installed.kubelet.jobUids.size).toBe(1);
    expect(installed.kubelet.podNames.size).toBe(1);
    // The Job controller's own record that it completed the Job (helm waits for that condition).
    expect(await jobsCompleted(1)).toEqual([...installed.kubelet.jobUids]);
    // hook-delete-policy hook-succeeded: helm deleted the Job, the garbage collector its Pod; the
    // Job's own Secret (before-hook-creation,hook-succeeded) is gone too.
    expect(kubectl(kube.kubeconfig, ['get', 'job', MIGRATIONS_JOB, '-n', NS]).status).not.toBe(0);
    await eventually('the hook Pod garbage-collected', () =>
      listIn('pods', `batch.kubernetes.io/job-name=${MIGRATIONS_JOB}`).length === 0 ? true : undefined,
    );
    expect(kubectl(kube.kubeconfig, ['get', 'secret', MIGRATIONS_JOB, '-n', NS]).status).not.toBe(0);
  });

  test('every Deployment gets its ReplicaSet and all its Pods, admitted under the restricted level (no FailedCreate)', async () => {
    const deployments = releaseDeployments();
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['live-hearth-api', 'live-hearth-operator', 'live-hearth-realtime']);
    for (const deployment of deployments) {
      const pods = await eventually(`${deployment.metadata.name}'s ${deployment.spec.replicas} pods`, () => {
        const replicaSets = listIn('replicasets').filter((rs) => ownedBy(rs, deployment));
        if (replicaSets.length !== 1) return undefined;
        const owned = listIn('pods').filter((p) => ownedBy(p, replicaSets[0]));
        return owned.length === deployment.spec.replicas ? owned : undefined;
      });
      for (const pod of pods) {
        // Nothing runs them: no scheduler placed them, no kubelet started them.
        expect(pod.status.phase).toBe('Pending');
        expect(pod.spec.nodeName).toBeUndefined();
      }
    }
    const failedCreates = listIn('events').filter((e) => e.reason === 'FailedCreate');
    expect(failedCreates.map((e) => e.message)).toEqual([]);
  });

  test('the same check sees a refusal: a Deployment that breaks the restricted level gets no Pod, and FailedCreate says why', async () => {
    const api = getJson(['deployment', `${RELEASE}-hearth-api`, '-n', NS]);
    const loose = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'loose-api', namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'loose-api' } },
        template: {
          metadata: { labels: { app: 'loose-api' } },
          spec: {
            ...api.spec.template.spec,
            containers: api.spec.template.spec.containers.map((c: KubeObject) => ({
              ...c,
              securityContext: { ...c.securityContext, allowPrivilegeEscalation: true },
            })),
          },
        },
      },
    };
    kubectlOk(['apply', '-f', '-'], JSON.stringify(loose));
    const refusal = await eventually('the FailedCreate of loose-api', () =>
      listIn('events').find((e) => e.reason === 'FailedCreate' && e.involvedObject.kind === 'ReplicaSet' && e.involvedObject.name.startsWith('loose-api-')),
    );
    expect(refusal.message).toContain('violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false');
    expect(listIn('pods', 'app=loose-api')).toEqual([]);
    kubectlOk(['delete', 'deployment', 'loose-api', '-n', NS, '--wait=true', '--timeout=60s']);
  });

  describe('helm upgrade with a changed CRD', () => {
    let upgraded: { res: RunResult; kubelet: MigrationsKubelet };
    let secretUid = '';

    beforeAll(async () => {
      // The next chart version: Plan gets an optional spec field (the way a CRD grows between releases).
      const next = path.join(workDir, 'hearth');
      fs.cpSync(CHART, next, { recursive: true });
      const plans = path.join(next, 'templates', 'crds', 'plans.yaml');
      const anchor = '              properties:\n                playersPerEnvironment:\n';
      const text = fs.readFileSync(plans, 'utf8');
      expect(text).toContain(anchor);
      fs.writeFileSync(
        plans,
        text.replace(
          anchor,
          '              properties:\n                retentionDays:\n                  type: integer\n                  minimum: 1\n                playersPerEnvironment:\n',
        ),
      );
      secretUid = getJson(['secret', `${RELEASE}-hearth-database`, '-n', NS]).metadata.uid ?? '';
      // Before the upgrade, the served schema has no such field: strict field validation refuses it.
      const before = kubectl(kube.kubeconfig, ['apply', '--dry-run=server', '--validate=strict', '-f', '-'], plan('retained', { retentionDays: 30 }));
      expect(before.status).not.toBe(0);
      expect(before.stderr).toContain('unknown field "spec.retentionDays"');
      upgraded = await helmWithHooks(['upgrade', RELEASE, next, '--values', valuesFile]);
    }, 180_000);

    test('the upgrade runs the migrations hook once more: a new Job, completed', async () => {
      helmOk(upgraded.res);
      expect(upgraded.kubelet.jobUids.size).toBe(1);
      expect([...upgraded.kubelet.jobUids][0]).not.toBe([...installed.kubelet.jobUids][0]);
      expect(await jobsCompleted(2)).toEqual([...installed.kubelet.jobUids, ...upgraded.kubelet.jobUids].sort());
    });

    test('the CRD is updated: the API server now serves the new field, and its rules', async () => {
      const crd = getJson(['crd', 'plans.hearth.gg']);
      expect(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.retentionDays).toEqual({ type: 'integer', minimum: 1 });
      // The served schema is what validates objects: strict validation accepts the field, the minimum holds.
      await eventually('the Plan with retentionDays accepted', () =>
        kubectl(kube.kubeconfig, ['apply', '--validate=strict', '-f', '-'], plan('retained', { retentionDays: 30 })).status === 0 ? true : undefined,
      );
      expect(getJson(['plan', 'retained']).spec.retentionDays).toBe(30);
      const tooShort = kubectl(kube.kubeconfig, ['apply', '--dry-run=server', '-f', '-'], plan('brief', { retentionDays: 0 }));
      expect(tooShort.status).not.toBe(0);
      expect(tooShort.stderr).toContain('spec.retentionDays: Invalid value: 0: spec.retentionDays in body should be greater than or equal to 1');
    });

    test("the chart's Secrets are updated in place, not re-created", () => {
      expect(getJson(['secret', `${RELEASE}-hearth-database`, '-n', NS]).metadata.uid).toBe(secretUid);
    });
  });

  describe('helm uninstall', () => {
    beforeAll(async () => {
      helmOk(
        await runCollected(kubeToolPath('helm'), ['uninstall', RELEASE, '--kubeconfig', kube.kubeconfig, '--namespace', NS, '--timeout', '120s'], {
          timeoutMs: 180_000,
        }),
      );
    }, 180_000);

    test('deletes the workloads: the garbage collector removes their ReplicaSets and Pods', async () => {
      expect(releaseDeployments()).toEqual([]);
      await eventually('every ReplicaSet and Pod gone', () => (listIn('replicasets').length === 0 && listIn('pods').length === 0 ? true : undefined));
    });

    test('deletes the Secrets the chart wrote, keeps the one it only read', () => {
      expect(listIn('secrets').map((s) => s.metadata.name)).toEqual(['hearth-redis']);
    });

    test('keeps the CRDs (helm.sh/resource-policy: keep), as upgraded, and the Hearth resources in them', () => {
      const crds = (getJson(['crd', '-l', 'app.kubernetes.io/part-of=hearth']).items as KubeObject[]).map((c) => c.metadata.name);
      const templates = fs.readdirSync(path.join(CHART, 'templates', 'crds')).filter((f) => f.endsWith('.yaml'));
      expect(crds).toHaveLength(templates.length);
      expect(crds).toContain('plans.hearth.gg');
      expect(getJson(['plan', 'retained']).spec.retentionDays).toBe(30);
    });

    test('the namespace can then be deleted: the namespace controller empties it and it goes', async () => {
      kubectlOk(['delete', 'namespace', NS, '--wait=false']);
      await eventually(`namespace ${NS} gone`, () => (kubectl(kube.kubeconfig, ['get', 'namespace', NS]).status !== 0 ? true : undefined));
    });
  });
});
