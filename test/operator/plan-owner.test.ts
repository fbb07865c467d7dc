/**
 * Two releases in one cluster, as two `hearth operator` processes against one kube-apiserver, each
 * with its own database and namespace: Plans are cluster-scoped, so both see every Plan and each
 * reconciles it into its own database, but only the owner (HEARTH_OPERATOR_PLAN_OWNER, true by
 * default; the chart sets it from operator.plans.statusOwner) writes the Plan's status and its one
 * finalizer. The follower (false) never writes to a Plan: what it wrote would show in the Plan's
 * managedFields under its field manager, which names its release. A deleted Plan leaves both
 * databases: the owner's through its finalizer, the follower's when the deletion starts, when the
 * object is gone, and, for a deletion it missed while down, on its first list.
 */
import { type Kube, startKube } from '../support/kube';
import { type TestDatabase, createTestDatabase } from '../support/harness';
import { plan, project } from '../support/manifests';
import { crdsYaml } from '@hearth/core/manifests';
import {
  type OperatorProcess,
  getJson,
  getOrNull,
  isLeader,
  kubectl,
  kubectlApply,
  metricsOf,
  startOperatorProcess,
  waitReady,
  waitUntil,
} from './operator-process';

jest.setTimeout(180_000);

const FINALIZER = 'hearth.gg/cleanup';

interface Release {
  name: string;
  namespace: string;
  database: TestDatabase;
  owner: boolean;
  operator?: OperatorProcess;
  /** The field manager its operator's writes carry: hearth-operator/<lease namespace>/<lease name>. */
  fieldManager: string;
}

let kube: Kube;
const red: Release = { name: 'red', namespace: 'red-games', owner: true } as Release;
const blue: Release = { name: 'blue', namespace: 'blue-games', owner: false } as Release;

async function startOperator(release: Release): Promise<OperatorProcess> {
  const op = await startOperatorProcess({
    kube,
    databaseUrl: release.database.url,
    redisPrefix: `hearth-test:plan-owner-${release.name}:`,
    env: {
      HEARTH_OPERATOR_LEASE_NAME: `${release.name}-hearth-operator`,
      HEARTH_OPERATOR_LEASE_NAMESPACE: release.namespace,
      HEARTH_OPERATOR_WATCH_NAMESPACE: release.namespace,
      // The owner as the chart's default leaves it (unset: true); the follower says so.
      ...(release.owner ? {} : { HEARTH_OPERATOR_PLAN_OWNER: 'false' }),
    },
  });
  release.operator = op;
  await waitUntil(`${release.name}'s operator leads`, async () => ((await isLeader(op)) ? true : undefined), 30_000);
  return op;
}

/** A plan's row in a release's database: its limit and whether it is retired. */
async function planRow(release: Release, name: string): Promise<{ players: number; retired: boolean } | null> {
  const row = await release.database.db('plans').where({ name }).first('spec', 'retired_at');
  return row ? { players: row.spec.playersPerEnvironment, retired: row.retired_at !== null } : null;
}

const waitRow = (release: Release, name: string, want: { players?: number; retired: boolean }) =>
  waitUntil(`plan ${name} in ${release.name}'s database ${JSON.stringify(want)}`, async () => {
    const row = await planRow(release, name);
    return row && row.retired === want.retired && (want.players === undefined || row.players === want.players) ? row : undefined;
  });

/** One sample of the operator's metrics: the value of `name` with these labels, 0 when absent. */
async function sample(op: OperatorProcess, name: string, labels: Record<string, string>): Promise<number> {
  const text = await metricsOf(op);
  for (const line of text.split('\n')) {
    const m = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return 0;
}

/** The managers that wrote to an object (its managedFields), with the subresource each wrote through. */
const writers = (obj: any): { manager: string; subresource?: string }[] =>
  (obj.metadata.managedFields ?? []).map((f: { manager: string; subresource?: string }) => ({ manager: f.manager, subresource: f.subresource }));

beforeAll(async () => {
  [kube, red.database, blue.database] = await Promise.all([startKube(), createTestDatabase(), createTestDatabase()]);
  await kubectl(kube, ['apply', '-f', '-'], crdsYaml());
  await kubectl(kube, ['wait', '--for=condition=Established', 'crd', '-l', 'app.kubernetes.io/part-of=hearth', '--timeout=30s']);
  for (const r of [red, blue]) {
    await kubectl(kube, ['create', 'namespace', r.namespace]);
    r.fieldManager = `hearth-operator/${r.namespace}/${r.name}-hearth-operator`;
  }
  await Promise.all([startOperator(red), startOperator(blue)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([red, blue].map((r) => (r.operator ? r.operator.stop() : Promise.resolve())));
  await Promise.all([red, blue].map((r) => r.database?.drop()));
  await kube?.stop();
});

test('both databases get a Plan and its changes; only the owner writes its status and its one finalizer', async () => {
  await kubectlApply(kube, [plan('gold', { playersPerEnvironment: 500 })]);
  const ready = await waitReady(kube, ['plan', 'gold']);
  await Promise.all([waitRow(red, 'gold', { players: 500, retired: false }), waitRow(blue, 'gold', { players: 500, retired: false })]);
  // The follower has finished its reconcile (the count comes after the step that would write status).
  await waitUntil('the follower counted its reconcile', async () =>
    (await sample(blue.operator!, 'hearth_operator_reconciles_total', { kind: 'Plan', outcome: 'ready' })) >= 1 ? true : undefined,
  );

  const gold = await getJson(kube, ['plan', 'gold', '--show-managed-fields']);
  expect(gold.metadata.finalizers).toEqual([FINALIZER]);
  expect(ready.status.observedGeneration).toBe(1);
  const wrote = writers(gold);
  expect(wrote).toContainEqual({ manager: red.fieldManager, subresource: 'status' });
  expect(wrote).toContainEqual({ manager: red.fieldManager, subresource: undefined }); // the finalizer's JSON patch
  expect(wrote.map((w) => w.manager)).not.toContain(blue.fieldManager);

  // A change reaches both databases; the status follows the owner's reconcile only.
  await kubectl(kube, ['patch', 'plan', 'gold', '--type=merge', '-p', JSON.stringify({ spec: { playersPerEnvironment: 750 } })]);
  await Promise.all([waitRow(red, 'gold', { players: 750, retired: false }), waitRow(blue, 'gold', { players: 750, retired: false })]);
  await waitUntil('the follower reconciled the change', async () =>
    (await sample(blue.operator!, 'hearth_operator_reconciles_total', { kind: 'Plan', outcome: 'ready' })) >= 2 ? true : undefined,
  );
  const changed = await waitReady(kube, ['plan', 'gold']);
  expect(changed.status.observedGeneration).toBe(2);
  const after = await getJson(kube, ['plan', 'gold', '--show-managed-fields']);
  expect(after.metadata.finalizers).toEqual([FINALIZER]);
  expect(writers(after).map((w) => w.manager)).not.toContain(blue.fieldManager);
});

test("a Plan deleted while the follower's database still has a live project on it: retired in the owner's at once, in the follower's once the project goes", async () => {
  // A Project of the follower's namespace only: the owner does not watch it, the follower's database holds it.
  const doc = project('on-gold', { plan: 'gold' }) as { metadata: { namespace?: string } };
  doc.metadata.namespace = blue.namespace;
  await kubectlApply(kube, [doc]);
  await waitReady(kube, ['project', 'on-gold', '-n', blue.namespace]);

  await kubectl(kube, ['delete', 'plan', 'gold', '--wait=false']);
  // The owner's finalizer retires it in the owner's database and lets it go.
  await waitRow(red, 'gold', { retired: true });
  await waitUntil('plan gold gone', async () => ((await getOrNull(kube, ['plan', 'gold'])) === null ? true : undefined));
  // The follower cannot retire it while a live project of its database is on it: it says so in its metric, and keeps trying.
  await waitUntil('the follower reports DeletionBlocked', async () =>
    (await sample(blue.operator!, 'hearth_operator_objects_not_ready', { kind: 'Plan', reason: 'DeletionBlocked' })) === 1 ? true : undefined,
  );
  expect(await planRow(blue, 'gold')).toMatchObject({ retired: false });
  expect(blue.operator!.log()).toMatch(/Plan gold is still the plan of live projects \(blue-games\/on-gold\)/);

  // The project goes: the follower retries the refused Plan at once (not after its backoff) and retires it.
  await kubectl(kube, ['delete', 'project', 'on-gold', '-n', blue.namespace, '--wait=true', '--timeout=30s']);
  await waitRow(blue, 'gold', { retired: true });
  await waitUntil('the follower no longer reports it', async () =>
    (await sample(blue.operator!, 'hearth_operator_objects_not_ready', { kind: 'Plan', reason: 'DeletionBlocked' })) === 0 ? true : undefined,
  );
});

test("a Plan deleted while the follower was down leaves its database on the follower's first list", async () => {
  await kubectlApply(kube, [plan('silver')]);
  await Promise.all([waitRow(red, 'silver', { retired: false }), waitRow(blue, 'silver', { retired: false })]);
  await blue.operator!.stop();

  await kubectl(kube, ['delete', 'plan', 'silver', '--wait=true', '--timeout=30s']);
  await waitRow(red, 'silver', { retired: true });
  expect(await planRow(blue, 'silver')).toMatchObject({ retired: false });

  // No event will say it went: its fresh list, held against its database, does.
  await startOperator(blue);
  await waitRow(blue, 'silver', { retired: true });
  // Gold was retired already; nothing else of the follower's database changed.
  expect(await planRow(blue, 'gold')).toMatchObject({ retired: true });
});
