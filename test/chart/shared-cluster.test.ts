/**
 * The chart beside other charts, installed for real with helm on kube-apiserver + kube-controller-
 * manager: the CRDs are cluster-scoped, so a cluster holds them once, whoever put them there.
 *  - `hearth crds | kubectl apply -f -` first, then `helm install`: the install succeeds and leaves the
 *    CRDs to kubectl (Helm would refuse to take over an object it did not make); its operator follows
 *    the Plans and NOTES.txt says how to make one release own them.
 *  - Two releases in two namespaces: the first installs the CRDs and owns the Plans; the second
 *    installs beside it, leaves the CRDs to the first and follows; upgrading the first still
 *    upgrades the CRDs, upgrading the second does not touch them.
 * Hooks are skipped (--no-hooks): install.test.ts runs them; what is tested here is which release
 * the CRDs belong to.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MANIFEST_KINDS } from '@hearth/core/manifests';
import { type Kube, startKube } from '../support/kube';
import { CHART, type KubeObject, MINIMAL_VALUES, ROOT, helm, kubectl, parseObjects, runOk } from './chart';

const CRD_COUNT = Object.keys(MANIFEST_KINDS).length;
const HEARTH_CRDS = 'app.kubernetes.io/part-of=hearth';

let kube: Kube;
let workDir = '';

function kubectlOk(args: string[], input?: string): string {
  const res = kubectl(kube.kubeconfig, args, input);
  if (res.status !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${res.status}:\n${res.stderr}${res.stdout}`);
  return res.stdout;
}
const getJson = (args: string[]) => JSON.parse(kubectlOk(['get', ...args, '-o', 'json'])) as KubeObject;
const hearthCrds = () => getJson(['crd', '-l', HEARTH_CRDS, '--show-managed-fields']).items as KubeObject[];

/** `helm <verb> <release> <chart>` in `namespace`, as an SRE runs it (the credentials from values); answers its output. */
function helmIn(namespace: string, args: string[]): string {
  const res = helm([...args, '--kubeconfig', kube.kubeconfig, '--namespace', namespace]);
  if (res.status !== 0) throw new Error(`helm ${args.join(' ')} exited ${res.status}:\n${res.stderr}${res.stdout}`);
  return res.stdout;
}
const release = (verb: 'install' | 'upgrade', name: string, namespace: string, chart = CHART, sets: string[] = []) =>
  helmIn(namespace, [verb, name, chart, '--values', MINIMAL_VALUES, '--no-hooks', ...sets.flatMap((s) => ['--set', s])]);

/** Who owns each Hearth CRD by Helm's annotations ('-' when no release does), and the managers that wrote it. */
function crdOwners(): { owners: string[]; managers: string[] } {
  const crds = hearthCrds();
  const owners = crds.map((c) => {
    const a = c.metadata.annotations ?? {};
    return a['meta.helm.sh/release-name'] ? `${a['meta.helm.sh/release-namespace']}/${a['meta.helm.sh/release-name']}` : '-';
  });
  const managers = crds.flatMap((c) => (c.metadata.managedFields ?? []).map((f: { manager: string }) => f.manager));
  return { owners: [...new Set(owners)], managers: [...new Set(managers)].sort() };
}

const manifestKinds = (namespace: string, name: string) => parseObjects(helmIn(namespace, ['get', 'manifest', name])).map((o) => o.kind);
const operatorEnv = (namespace: string, name: string): Record<string, string> =>
  Object.fromEntries(
    getJson(['deployment', `${name}-hearth-operator`, '-n', namespace]).spec.template.spec.containers[0].env.map((e: { name: string; value?: string }) => [
      e.name,
      e.value,
    ]),
  );
const canI = (namespace: string, name: string, verb: string, resource: string) =>
  kubectl(kube.kubeconfig, ['auth', 'can-i', verb, resource, '--as', `system:serviceaccount:${namespace}:${name}-hearth-operator`]).stdout.trim() === 'yes';

/**
 * Each case on a cluster of its own, with no Hearth CRD before it: the CRDs are cluster-scoped, and
 * deleting them between cases left the next one waiting on the API server's cleanup finalizer of a
 * CRD (over a minute on a loaded machine), which is no part of what is tested here.
 */
function freshCluster(namespaces: string[]): void {
  beforeAll(async () => {
    kube = await startKube({ controllers: true });
    for (const ns of namespaces) kubectlOk(['create', 'namespace', ns]);
  }, 150_000);
  afterAll(async () => {
    await kube?.stop();
  });
}

beforeAll(() => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-shared-'));
});

afterAll(() => {
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

describe('the CRDs applied with `hearth crds | kubectl apply -f -`, then helm install', () => {
  freshCluster(['games-kubectl']);
  let notes = '';
  let versions: (string | undefined)[] = [];

  beforeAll(() => {
    // The documented order: the CLI prints them, kubectl applies them.
    const crds = runOk(process.execPath, [path.join(ROOT, 'apps/cli/bin/hearth'), 'crds']);
    kubectlOk(['apply', '-f', '-'], crds);
    kubectlOk(['wait', '--for=condition=Established', 'crd', '-l', HEARTH_CRDS, '--timeout=30s']);
    versions = hearthCrds().map((c) => c.metadata.resourceVersion);
    notes = release('install', 'solo', 'games-kubectl');
  }, 120_000);

  test('the install succeeds and leaves the CRDs to kubectl: no Helm ownership, not in the release', () => {
    expect(JSON.parse(helmIn('games-kubectl', ['status', 'solo', '-o', 'json'])).info.status).toBe('deployed');
    expect(hearthCrds()).toHaveLength(CRD_COUNT);
    expect(crdOwners()).toEqual({ owners: ['-'], managers: ['kube-apiserver', 'kubectl-client-side-apply'] });
    expect(hearthCrds().map((c) => c.metadata.labels?.['app.kubernetes.io/managed-by'])).toEqual(Array(CRD_COUNT).fill(undefined));
    expect(manifestKinds('games-kubectl', 'solo')).not.toContain('CustomResourceDefinition');
    expect(hearthCrds().map((c) => c.metadata.resourceVersion)).toEqual(versions);
  });

  test('its operator follows the Plans (they are not its CRDs), and NOTES.txt says how to make one release own them', () => {
    expect(operatorEnv('games-kubectl', 'solo').HEARTH_OPERATOR_PLAN_OWNER).toBe('false');
    expect(canI('games-kubectl', 'solo', 'watch', 'plans.hearth.gg')).toBe(true);
    expect(canI('games-kubectl', 'solo', 'update', 'plans.hearth.gg/status')).toBe(false);
    expect(notes).toContain('It follows the Plans into its database and never writes to them');
    expect(notes).toMatch(/set\s+operator\.plans\.statusOwner=true on exactly one release/);
  });

  test('an upgrade leaves them to kubectl too; with statusOwner=true its operator owns the Plans', () => {
    const notesAfter = release('upgrade', 'solo', 'games-kubectl', CHART, ['operator.plans.statusOwner=true']);
    expect(hearthCrds().map((c) => c.metadata.resourceVersion)).toEqual(versions);
    expect(operatorEnv('games-kubectl', 'solo').HEARTH_OPERATOR_PLAN_OWNER).toBe('true');
    expect(canI('games-kubectl', 'solo', 'update', 'plans.hearth.gg/status')).toBe(true);
    expect(notesAfter).toContain('It owns the Plans');
  });

  test('uninstalling leaves the CRDs kubectl applied', () => {
    helmIn('games-kubectl', ['uninstall', 'solo', '--wait', '--timeout', '60s']);
    expect(hearthCrds().map((c) => c.metadata.resourceVersion)).toEqual(versions);
  });
});

describe('two releases in two namespaces', () => {
  freshCluster(['games-red', 'games-blue']);
  let redNotes = '';
  let blueNotes = '';
  let next = '';

  beforeAll(() => {
    expect(hearthCrds()).toEqual([]);
    redNotes = release('install', 'red', 'games-red');
    blueNotes = release('install', 'blue', 'games-blue');
    // The next chart version: Plan gets an optional spec field (as install.test.ts upgrades).
    next = path.join(workDir, 'hearth');
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
  }, 180_000);

  const retention = () => getJson(['crd', 'plans.hearth.gg']).spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.retentionDays;

  test('both install; the first owns the CRDs, the second leaves them to it', () => {
    for (const [ns, name] of [
      ['games-red', 'red'],
      ['games-blue', 'blue'],
    ]) {
      expect(JSON.parse(helmIn(ns, ['status', name, '-o', 'json'])).info.status).toBe('deployed');
    }
    expect(hearthCrds()).toHaveLength(CRD_COUNT);
    expect(crdOwners().owners).toEqual(['games-red/red']);
    expect(manifestKinds('games-red', 'red').filter((k) => k === 'CustomResourceDefinition')).toHaveLength(CRD_COUNT);
    expect(manifestKinds('games-blue', 'blue')).not.toContain('CustomResourceDefinition');
  });

  test("the first release's operator owns the Plans, the second's follows, with RBAC to match", () => {
    expect(operatorEnv('games-red', 'red').HEARTH_OPERATOR_PLAN_OWNER).toBe('true');
    expect(operatorEnv('games-blue', 'blue').HEARTH_OPERATOR_PLAN_OWNER).toBe('false');
    expect(canI('games-red', 'red', 'update', 'plans.hearth.gg/status')).toBe(true);
    expect(canI('games-red', 'red', 'update', 'plans.hearth.gg/finalizers')).toBe(true);
    for (const [verb, resource] of [
      ['update', 'plans.hearth.gg/status'],
      ['update', 'plans.hearth.gg/finalizers'],
      ['patch', 'plans.hearth.gg'],
    ]) {
      expect(canI('games-blue', 'blue', verb, resource)).toBe(false);
    }
    expect(canI('games-blue', 'blue', 'watch', 'plans.hearth.gg')).toBe(true);
    expect(redNotes).toContain('It owns the Plans');
    expect(blueNotes).toContain('It follows the Plans into its database');
  });

  test('upgrading the second leaves the CRDs alone; upgrading the first upgrades them', () => {
    const before = getJson(['crd', 'plans.hearth.gg']).metadata.resourceVersion;
    release('upgrade', 'blue', 'games-blue', next);
    expect(getJson(['crd', 'plans.hearth.gg']).metadata.resourceVersion).toBe(before);
    expect(retention()).toBeUndefined();

    release('upgrade', 'red', 'games-red', next);
    expect(retention()).toEqual({ type: 'integer', minimum: 1 });
    expect(crdOwners().owners).toEqual(['games-red/red']);
    // Still the second release's operator follows.
    expect(operatorEnv('games-blue', 'blue').HEARTH_OPERATOR_PLAN_OWNER).toBe('false');
  });

  test('uninstalling the first keeps the CRDs (resource-policy keep), still marked as its own', () => {
    helmIn('games-red', ['uninstall', 'red', '--wait', '--timeout', '60s']);
    expect(hearthCrds()).toHaveLength(CRD_COUNT);
    expect(crdOwners().owners).toEqual(['games-red/red']);
    expect(retention()).toEqual({ type: 'integer', minimum: 1 });
  });
});
