/**
 * What an SRE trying the operator with kubectl found wanting, each on a real kube-apiserver with
 * `hearth operator` and a fresh database: a folder applied at once turns Ready without a burst of
 * MissingReference warnings; the objects naming an environment or a plan follow it within seconds
 * (not at the relist); a flag a refused GameConfig takes over is said on it; a deleted Plan is
 * deleted for the projects to come too. (Identity fields: test/operator/crds.test.ts.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { API_GROUP } from '@hearth/core/manifests';
import type { Harness } from '../support/harness';
import type { Kube } from '../support/kube';
import { NAMESPACE, currency, environment, gameConfig, plan, project, realm, serverKey } from '../support/manifests';
import { type OperatorWorld, startOperatorWorld } from './world';
import { type OperatorProcess, getJson, getOrNull, kubectl, kubectlApply, metricsOf, readyOf, waitReady, waitUntil } from './operator-process';

jest.setTimeout(90_000);

let kube: Kube;
let h: Harness;
let operator: OperatorProcess;

let world: OperatorWorld | undefined;
beforeAll(async () => {
  world = await startOperatorWorld();
  ({ kube, h, operator } = world);
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

const ns = (kind: string, name: string) => [kind, name, '-n', NAMESPACE];

interface Event {
  type: string;
  reason: string;
  message: string;
  involvedObject: { apiVersion: string; kind: string; name: string };
}
async function eventsIn(namespace: string): Promise<Event[]> {
  return (await getJson(kube, ['events', '-n', namespace])).items;
}
async function eventsOf(name: string, namespace = NAMESPACE): Promise<Event[]> {
  return (await eventsIn(namespace)).filter((e) => e.involvedObject.name === name);
}

describe('a folder applied at once', () => {
  test('the examples every kind names: all Ready, not one Warning Event on the way', async () => {
    const dir = path.join(__dirname, '..', '..', 'examples', 'dev');
    const text = fs
      .readdirSync(dir)
      .sort()
      .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
      .join('\n---\n');
    const namespaces = [...new Set([...text.matchAll(/namespace: ([a-z0-9-]+)/g)].map((x) => x[1]))];
    for (const namespace of namespaces) await kubectl(kube, ['create', 'namespace', namespace]);
    // One kubectl apply of the whole folder: every kind's controller gets its objects at once, in no order.
    await kubectl(kube, ['apply', '-f', '-'], text);
    const all = await waitUntil(
      'every example Ready',
      async () => {
        const items = (await getJson(kube, ['hearth', '-A'])).items as any[];
        return items.length > 0 && items.every((o) => readyOf(o)?.status === 'True') ? items : undefined;
      },
      60_000,
      500,
    );
    expect(all.length).toBeGreaterThanOrEqual(14);
    // Only events on Hearth's objects: kube-apiserver's own controllers may warn about its
    // built-in objects while it starts on a slow machine (ClusterIPNotAllocated on the
    // "kubernetes" Service), which says nothing about the operator.
    const warnings = (await Promise.all([...namespaces, 'default'].map(eventsIn)))
      .flat()
      .filter((e) => e.type === 'Warning' && e.involvedObject.apiVersion?.startsWith(`${API_GROUP}/`));
    expect(warnings).toEqual([]);
  });
});

describe('the objects naming a changed object follow it within seconds', () => {
  beforeAll(async () => {
    await kubectlApply(kube, [
      plan('ops-plan', { sessionSeats: 8 }),
      project('ops', { plan: 'ops-plan', sessionSeats: 8 }),
      environment('ops-live', 'ops'),
      serverKey('ops-key', 'ops-live'),
      gameConfig('ops-config', { environment: 'ops-live', flags: [{ name: 'new_shop', enabled: false }] }),
      currency('ops-gold', { environment: 'ops-live', name: 'Gold', scope: 'account', kind: 'balance' }),
      realm('ops-season', { environment: 'ops-live', number: 1, name: 'Season 1', startAt: '2026-01-01T00:00:00Z' }),
    ]);
    for (const [kind, name] of [
      ['serverkey', 'ops-key'],
      ['gameconfig', 'ops-config'],
      ['currency', 'ops-gold'],
      ['realm', 'ops-season'],
    ]) {
      await waitReady(kube, ns(kind, name));
    }
  });

  test('a plan lowered under a project: the project turns Ready=False (PlanLimit) at once', async () => {
    await kubectlApply(kube, [plan('ops-plan', { sessionSeats: 4 })]);
    const started = Date.now();
    const refused = await waitReady(kube, ns('project', 'ops'), 'False', 15_000);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(readyOf(refused)).toMatchObject({
      reason: 'PlanLimit',
      message: expect.stringContaining('spec.sessionSeats is 8, more than plan "ops-plan" allows (4)'),
    });
    await kubectlApply(kube, [plan('ops-plan', { sessionSeats: 8 })]);
    await waitReady(kube, ns('project', 'ops'), 'True', 15_000);
  });

  test('an environment retired: its key, config, currency and realm turn Ready=False within seconds, saying it was retired', async () => {
    await kubectl(kube, ['delete', ...ns('gameenvironment', 'ops-live'), '--timeout=20s']);
    for (const [kind, name] of [
      ['serverkey', 'ops-key'],
      ['gameconfig', 'ops-config'],
      ['currency', 'ops-gold'],
      ['realm', 'ops-season'],
    ]) {
      // Within the grace a missing reference is given (5 s) and a retry, far below the 300 s relist.
      const obj = await waitReady(kube, ns(kind, name), 'False', 20_000);
      expect(readyOf(obj)).toMatchObject({
        reason: 'MissingReference',
        message: 'spec.environment names environment "ops-live", which was retired (its GameEnvironment was deleted; apply it again to bring it back)',
      });
    }
    // Back: they all follow again (and each says it recovered).
    await kubectlApply(kube, [environment('ops-live', 'ops')]);
    for (const [kind, name] of [
      ['serverkey', 'ops-key'],
      ['gameconfig', 'ops-config'],
      ['currency', 'ops-gold'],
      ['realm', 'ops-season'],
    ]) {
      await waitReady(kube, ns(kind, name), 'True', 15_000);
    }
    const recovered = await waitUntil('a Recovered event', async () => (await eventsOf('ops-key')).find((e) => e.reason === 'Recovered'));
    expect(recovered).toMatchObject({ type: 'Normal', message: expect.stringContaining('which was retired') });
  });
});

describe('who holds what, as the cluster shows it', () => {
  test('a flag a refused GameConfig wanted: taken over once its owner is deleted, and said so on the taker', async () => {
    const env = await h.db('environments').where({ namespace: NAMESPACE, name: 'ops-live' }).first();
    await kubectlApply(kube, [gameConfig('ops-rival', { environment: 'ops-live', flags: [{ name: 'new_shop', enabled: true }] })]);
    const refused = await waitReady(kube, ns('gameconfig', 'ops-rival'), 'False');
    expect(readyOf(refused)).toMatchObject({
      reason: 'Refused',
      message: expect.stringContaining(`"new_shop" already belongs to GameConfig ${NAMESPACE}/ops-config`),
    });
    expect(await h.db('flags').where({ environment_id: env.id, name: 'new_shop' }).first()).toMatchObject({ enabled: false });

    await kubectl(kube, ['delete', ...ns('gameconfig', 'ops-config'), '--timeout=20s']);
    await waitReady(kube, ns('gameconfig', 'ops-rival'), 'True', 15_000);
    expect(await h.db('flags').where({ environment_id: env.id, name: 'new_shop' }).first()).toMatchObject({ enabled: true });
    const said = await waitUntil('a Recovered event', async () => (await eventsOf('ops-rival')).find((e) => e.reason === 'Recovered'));
    expect(said).toMatchObject({
      type: 'Normal',
      message: expect.stringContaining(`(Refused: spec.flags.0.name "new_shop" already belongs to GameConfig ${NAMESPACE}/ops-config`),
    });
  });

  test('a deleted Plan: blocked while a live project is on it; once deleted, a Project naming it is refused, not Ready on a ghost', async () => {
    await kubectl(kube, ['delete', 'plan', 'ops-plan', '--wait=false']);
    const blocked = await waitReady(kube, ['plan', 'ops-plan'], 'False');
    expect(blocked.metadata.deletionTimestamp).toBeTruthy();
    expect(readyOf(blocked)).toMatchObject({ reason: 'DeletionBlocked', message: expect.stringContaining(`live projects (${NAMESPACE}/ops)`) });
    // Waiting for its cleanup, it is counted, aged from its deletionTimestamp (HearthCleanupStuck's series).
    const deletedAt = Date.parse(blocked.metadata.deletionTimestamp);
    const terminating = await metricsOf(operator);
    expect(terminating).toMatch(/^hearth_operator_terminating_objects\{kind="Plan"\} 1$/m);
    const age = Number(/^hearth_operator_terminating_oldest_seconds\{kind="Plan"\} (\S+)$/m.exec(terminating)?.[1]);
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThanOrEqual((Date.now() - deletedAt) / 1000 + 1);
    // The reconcile lag is there for every kind (HearthOperatorReconcileLag's series).
    expect(terminating).toMatch(/^hearth_operator_queue_oldest_seconds\{kind="Plan"\} \S+$/m);
    // Moved to another plan, the project lets the Plan go.
    await kubectlApply(kube, [plan('ops-other'), project('ops', { plan: 'ops-other', sessionSeats: 8 })]);
    await waitUntil('the Plan is gone', async () => ((await getOrNull(kube, ['plan', 'ops-plan'])) === null ? true : undefined), 20_000);
    expect((await h.db('plans').where({ name: 'ops-plan' }).first()).retired_at).not.toBeNull();
    await waitUntil(
      'no Plan counted as terminating',
      async () => (/^hearth_operator_terminating_objects\{kind="Plan"\} 0$/m.test(await metricsOf(operator)) ? true : undefined),
      5_000,
    );

    await kubectlApply(kube, [project('ops-late', { plan: 'ops-plan' })]);
    const late = await waitReady(kube, ns('project', 'ops-late'), 'False', 20_000);
    expect(readyOf(late)).toMatchObject({ reason: 'MissingReference', message: expect.stringContaining('names plan "ops-plan", which was deleted') });
    expect(await h.db('projects').where({ namespace: NAMESPACE, name: 'ops-late' }).first()).toBeUndefined();
    // Applied again, the plan is back and the project follows by itself.
    await kubectlApply(kube, [plan('ops-plan')]);
    await waitReady(kube, ns('project', 'ops-late'), 'True', 15_000);
  });
});

test('one operator log line names its kind once', () => {
  const lines = operator
    .log()
    .split('\n')
    .filter((l) => l.includes('"kind"'));
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) expect(line.match(/"kind":/g)).toHaveLength(1);
});
