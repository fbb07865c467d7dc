/**
 * v1alpha1 → v1beta1 on a real kube-apiserver (docs/kubernetes.md "API versions: v1alpha1 to
 * v1beta1"): objects made while the CRDs serve and store v1alpha1 alone survive an upgrade of the CRDs
 * that adds v1beta1, with the same schema, as the storage version (v1alpha1 still served, deprecated).
 * They read the same as either version without being written; the storage migration
 * docs/kubernetes.md gives re-writes each, stored as v1beta1 then (read from etcd itself), and sets
 * `status.storedVersions` to v1beta1 alone. A rollback to CRDs that do not list v1beta1 is refused
 * from then on; one to the CRDs of the step before (v1beta1 served, v1alpha1 stored) is taken.
 *
 * The CRDs are the generated ones (`crdsYaml`), with the versions each step of the plan lists; the
 * chart ships v1alpha1 alone. No sleeps: Established and the new version's discovery are awaited.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { type CrdVersion, MANIFEST_KINDS, crdsYaml } from '@hearth/core/manifests';
import { type Kube, kubeToolPath, startKube } from '../support/kube';
import * as m from '../support/manifests';
import { runCollected } from '../support/processes';
import { eventually } from '../support/wait';

const GROUP = 'hearth.gg';
const ALPHA = 'v1alpha1';
const BETA = 'v1beta1';
const DEPRECATION = 'hearth.gg/v1alpha1 is deprecated: use hearth.gg/v1beta1 (docs/kubernetes.md "API versions")';

/** What the chart ships: v1alpha1 alone. */
const SHIPPED: CrdVersion[] = [{ name: ALPHA, served: true, storage: true }];
/** The plan's first step: v1beta1 served beside, objects still stored as v1alpha1. */
const BETA_SERVED: CrdVersion[] = [
  { name: ALPHA, served: true, storage: true },
  { name: BETA, served: true, storage: false },
];
/** The plan's second step (the upgrade under test): v1beta1 stored, v1alpha1 still served, deprecated. */
const BETA_STORED: CrdVersion[] = [
  { name: ALPHA, served: true, storage: false, deprecationWarning: DEPRECATION },
  { name: BETA, served: true, storage: true },
];

let kube: Kube;

/** kubectl with the admin's kubeconfig; resolves with stdout and stderr (warnings), or rejects with stderr. */
function kubectlOut(args: string[], input?: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(kubeToolPath('kubectl'), ['--kubeconfig', kube.kubeconfig, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
      // A refused apply repeats the whole CRD in its message: each line cut short, the reason is at the end of it.
      err
        ? reject(
            new Error(
              (stderr || err.message)
                .split('\n')
                .map((l) => (l.length > 600 ? `${l.slice(0, 200)} … ${l.slice(-400)}` : l))
                .join('\n'),
            ),
          )
        : resolve({ stdout, stderr }),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}
const kubectl = async (args: string[], input?: string) => (await kubectlOut(args, input)).stdout;
const applyCrds = (versions: CrdVersion[]) => kubectl(['apply', '-f', '-'], crdsYaml({ versions }));
const crdName = (kind: keyof typeof MANIFEST_KINDS) => `${MANIFEST_KINDS[kind].crd.plural}.${GROUP}`;

/** The objects under test: a cluster-scoped kind, one with identity rules, one with a free-form part, one more. */
const OBJECTS = [
  m.plan('versions-plan'),
  m.environment('versions-live', 'versions-project'),
  m.currency('versions-gold', { environment: 'versions-live', name: 'Gold', scope: 'account', kind: 'balance', max: 1000000 }),
  m.blogPost('versions-post', {
    environment: 'versions-live',
    title: 'Hello',
    category: 'news',
    status: 'published',
    cover: null,
    content: {
      blocks: [
        { type: 'heading', level: 2, text: 'Hi' },
        { type: 'list', ordered: false, items: ['a'] },
      ],
    },
  }),
];
type Doc = (typeof OBJECTS)[number];
const KINDS = [...new Set(OBJECTS.map((d) => d.kind))] as (keyof typeof MANIFEST_KINDS)[];

/** `<plural>.<version>.hearth.gg <name> [-n namespace]`: the object named in a given version of the API. */
function named(doc: Doc, version: string): string[] {
  const resource = `${MANIFEST_KINDS[doc.kind].crd.plural}.${version}.${GROUP}`;
  const namespace = (doc.metadata as { namespace?: string }).namespace;
  return [resource, doc.metadata.name, ...(namespace ? ['-n', namespace] : [])];
}
const read = async (doc: Doc, version: string) => JSON.parse(await kubectl(['get', ...named(doc, version), '-o', 'json']));

/** What must not change across versions: everything but apiVersion (and managedFields, which record the version each manager wrote). */
function content(obj: any) {
  const { managedFields: _managed, ...metadata } = obj.metadata;
  return { kind: obj.kind, metadata, spec: obj.spec, status: obj.status };
}

/** The apiVersion an object is stored in, read from etcd itself (custom resources are stored as JSON). */
async function storedAs(doc: Doc): Promise<string> {
  const namespace = (doc.metadata as { namespace?: string }).namespace;
  const key = `/registry/${GROUP}/${MANIFEST_KINDS[doc.kind].crd.plural}/${namespace ? `${namespace}/` : ''}${doc.metadata.name}`;
  const res = await fetch(`${kube.etcd}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from(key).toString('base64') }) });
  const kvs = ((await res.json()) as { kvs?: { value: string }[] }).kvs ?? [];
  if (kvs.length !== 1) throw new Error(`etcd holds no ${key}`);
  return JSON.parse(Buffer.from(kvs[0].value, 'base64').toString('utf8')).apiVersion;
}

const storedVersions = async (kind: keyof typeof MANIFEST_KINDS): Promise<string[]> =>
  JSON.parse(await kubectl(['get', 'crd', crdName(kind), '-o', 'json'])).status.storedVersions;

/** Established, then the version's resources in discovery: only then does the API server serve the version. */
async function awaitServed(version: string): Promise<void> {
  await kubectl(['wait', '--for=condition=Established', 'crd', '-l', 'app.kubernetes.io/part-of=hearth', '--timeout=30s']);
  const plurals = Object.values(MANIFEST_KINDS).map((k) => k.crd.plural);
  await eventually(
    async () => {
      const listed = await kubectl(['get', '--raw', `/apis/${GROUP}/${version}`]).then(
        (out) => JSON.parse(out).resources.map((r: { name: string }) => r.name),
        () => [],
      );
      return plurals.every((p) => listed.includes(p));
    },
    30_000,
    100,
  );
}

const before = new Map<string, any>();

beforeAll(async () => {
  kube = await startKube();
  await applyCrds(SHIPPED);
  await awaitServed(ALPHA);
  await kubectl(['create', 'namespace', m.NAMESPACE]);
  await kubectl(['apply', '-f', '-'], OBJECTS.map((d) => stringify(d)).join('---\n'));
  // A status as the operator writes it: it must survive too.
  const status = {
    observedGeneration: 1,
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'in the database', lastTransitionTime: '2026-12-01T00:00:00Z', observedGeneration: 1 },
    ],
  };
  for (const doc of OBJECTS) {
    await kubectl(['patch', ...named(doc, ALPHA), '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
    before.set(doc.metadata.name, await read(doc, ALPHA));
  }
}, 180_000);
afterAll(() => kube?.stop());

test('the shipped CRDs serve and store v1alpha1 alone, and the objects are stored as v1alpha1', async () => {
  for (const kind of KINDS) {
    const crd = JSON.parse(await kubectl(['get', 'crd', crdName(kind), '-o', 'json']));
    expect(crd.spec.versions.map((v: CrdVersion) => [v.name, v.served, v.storage])).toEqual([[ALPHA, true, true]]);
    expect(crd.status.storedVersions).toEqual([ALPHA]);
  }
  for (const doc of OBJECTS) expect(await storedAs(doc)).toBe(`${GROUP}/${ALPHA}`);
  await expect(kubectl(['get', ...named(OBJECTS[1], BETA)])).rejects.toThrow(/the server doesn't have a resource type|could not find the requested resource/);
});

test('an upgrade of the CRDs adding v1beta1 as the storage version is taken; storedVersions keeps v1alpha1 beside it', async () => {
  await applyCrds(BETA_STORED);
  await awaitServed(BETA);
  for (const kind of KINDS) expect(await storedVersions(kind)).toEqual([ALPHA, BETA]);
  // Nothing was written by the upgrade itself: every object is where it was.
  for (const doc of OBJECTS) expect(await storedAs(doc)).toBe(`${GROUP}/${ALPHA}`);
});

test('every object reads the same as v1alpha1 and as v1beta1 (only apiVersion differs), and v1alpha1 warns that it is deprecated', async () => {
  for (const doc of OBJECTS) {
    const was = before.get(doc.metadata.name);
    const beta = await read(doc, BETA);
    expect(beta.apiVersion).toBe(`${GROUP}/${BETA}`);
    expect(content(beta)).toEqual(content(was));
    const alpha = await kubectlOut(['get', ...named(doc, ALPHA), '-o', 'json']);
    expect(JSON.parse(alpha.stdout).apiVersion).toBe(`${GROUP}/${ALPHA}`);
    expect(content(JSON.parse(alpha.stdout))).toEqual(content(was));
    expect(alpha.stderr).toContain(DEPRECATION);
  }
});

test('an object written as v1beta1 is stored as v1beta1 and reads back as v1alpha1 (what the previous operator reads)', async () => {
  const silver = {
    ...m.currency('versions-silver', { environment: 'versions-live', name: 'Silver', scope: 'account', kind: 'balance' }),
    apiVersion: `${GROUP}/${BETA}`,
  };
  await kubectl(['apply', '-f', '-'], stringify(silver));
  expect(await storedAs(silver as Doc)).toBe(`${GROUP}/${BETA}`);
  const [alpha, beta] = [await read(silver as Doc, ALPHA), await read(silver as Doc, BETA)];
  expect(beta.spec).toEqual({ ...silver.spec, enabled: true }); // the schema's default filled in
  expect({ apiVersion: alpha.apiVersion, ...content(alpha) }).toEqual({ apiVersion: `${GROUP}/${ALPHA}`, ...content(beta) });
  await kubectl(['delete', ...named(silver as Doc, BETA)]);
});

/** The storage migration by hand, as docs/kubernetes.md writes it (the sh block that sets storedVersions). */
function guideMigrationScript(): string {
  const guide = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'kubernetes.md'), 'utf8');
  const script = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)].map((b) => b[1]).find((b) => b.includes('storedVersions'));
  if (!script) throw new Error('docs/kubernetes.md has no sh block that sets storedVersions');
  return script;
}

test("docs/kubernetes.md's migration re-writes every object as v1beta1, unchanged, and sets storedVersions to v1beta1 alone", async () => {
  // An empty patch of each object, as a storage version migrator sends: the API server writes it back
  // in the storage version (its bytes differ from what etcd holds), and nothing else changes.
  const run = await runCollected('bash', ['-euo', 'pipefail', '-c', guideMigrationScript()], {
    timeoutMs: 120_000,
    env: { ...process.env, PATH: `${path.dirname(kubeToolPath('kubectl'))}:${process.env.PATH}`, KUBECONFIG: kube.kubeconfig },
  });
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  for (const doc of OBJECTS) {
    expect(await storedAs(doc)).toBe(`${GROUP}/${BETA}`);
    const now = await read(doc, BETA);
    const was = before.get(doc.metadata.name);
    // Written (a new resourceVersion), nothing else changed: no new generation, the same spec and status.
    expect(now.metadata.resourceVersion).not.toBe(was.metadata.resourceVersion);
    const { resourceVersion: _now, ...metadata } = content(now).metadata;
    const { resourceVersion: _was, ...metadataWas } = content(was).metadata;
    expect({ ...content(now), metadata }).toEqual({ ...content(was), metadata: metadataWas });
  }
  for (const kind of Object.keys(MANIFEST_KINDS) as (keyof typeof MANIFEST_KINDS)[]) expect(await storedVersions(kind)).toEqual([BETA]);
});

test('a rollback to CRDs without v1beta1 is refused once objects are stored in it; one to v1beta1 served but not stored is taken', async () => {
  await expect(applyCrds(SHIPPED)).rejects.toThrow(
    /status.storedVersions\[0\]: Invalid value: "v1beta1": missing from spec.versions; v1beta1 was previously a storage version/,
  );
  const crd = JSON.parse(await kubectl(['get', 'crd', crdName('GameEnvironment'), '-o', 'json']));
  expect(crd.spec.versions.map((v: CrdVersion) => v.name)).toEqual([ALPHA, BETA]);

  await applyCrds(BETA_SERVED);
  await awaitServed(BETA);
  // The API server adds the storage version back; the objects stored as v1beta1 still read as both.
  expect(await storedVersions('GameEnvironment')).toEqual([BETA, ALPHA]);
  for (const doc of OBJECTS) {
    expect(content(await read(doc, ALPHA)).spec).toEqual(before.get(doc.metadata.name).spec);
    expect(content(await read(doc, BETA)).spec).toEqual(before.get(doc.metadata.name).spec);
  }
});
