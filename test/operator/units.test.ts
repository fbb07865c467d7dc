/**
 * The operator's pure parts, without a cluster: the keyed queue (one run per key at a time, newest
 * state wins, retries back off), condition semantics, refusal reasons, the Secret's name, and which
 * resource a watched Secret's event reconciles.
 */
import { ManifestError } from '@hearth/core/manifests';
import { declareMetrics } from '@hearth/core/process';
import { nextStatus, sameStatus, setCondition } from '../../operator/src/conditions';
import client from 'prom-client';
import { loadOperatorConfig } from '../../operator/src/config';
import { refusalReason } from '../../operator/src/controller';
import type { CustomObject } from '../../operator/src/kube';
import { OperatorMetrics } from '../../operator/src/metrics';
import { NotReadyObjects } from '../../operator/src/not-ready';
import { KeyedQueue, type WorkResult, backoffDelay } from '../../operator/src/queue';
import { secretNameOf } from '../../operator/src/server-key';
import { TerminatingObjects } from '../../operator/src/terminating';
import { eventually } from '../support/wait';
import { TestClock } from '../support/clock';
import { ownersOf } from '../../operator/src/secret-watch';

/** A run the test ends: `started` resolves when the work begins, `finish()` lets it answer. */
function gate() {
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  return { finished, finish };
}

describe('KeyedQueue', () => {
  test('never runs one key twice at once; an add during a run runs it once more afterwards', async () => {
    let running = 0;
    let most = 0;
    const runs: string[] = [];
    const held = [gate(), gate(), gate()];
    const q = new KeyedQueue(
      async (key) => {
        running += 1;
        most = Math.max(most, running);
        await held[runs.push(key) - 1].finished;
        running -= 1;
        return 'done';
      },
      { concurrency: 4, baseDelayMs: 10, maxDelayMs: 100 },
    );
    q.add('a');
    expect(runs).toEqual(['a']); // the first run has begun and is held
    for (let i = 0; i < 5; i += 1) q.add('a'); // five events while it runs: one more run, not five
    expect(runs).toEqual(['a']);
    held[0].finish();
    await eventually(async () => runs.length === 2, 2000);
    held[1].finish();
    await q.idle();
    expect(runs).toEqual(['a', 'a']);
    expect(most).toBe(1);
  });

  test('different keys run side by side up to the concurrency', async () => {
    let running = 0;
    let most = 0;
    const held = new Map<string, () => void>();
    const q = new KeyedQueue(
      async (key) => {
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => held.set(key, resolve));
        running -= 1;
        return 'done';
      },
      { concurrency: 2, baseDelayMs: 10, maxDelayMs: 100 },
    );
    ['a', 'b', 'c', 'd'].forEach((k) => q.add(k));
    expect([...held.keys()]).toEqual(['a', 'b']); // two at once; c and d wait
    held.get('a')!();
    await eventually(async () => held.has('c'), 2000);
    expect(held.has('d')).toBe(false);
    for (const key of ['b', 'c']) held.get(key)!();
    await eventually(async () => held.has('d'), 2000);
    held.get('d')!();
    await q.idle();
    expect(most).toBe(2);
  });

  test('a retry (or a throw) comes back after a growing backoff; success resets it', async () => {
    const clock = new TestClock({ at: 1_000_000 });
    const times: number[] = [];
    let failures = 3;
    const errors: unknown[] = [];
    const q = new KeyedQueue(
      async () => {
        times.push(clock.now());
        if (failures-- === 3) throw new Error('boom');
        return failures >= 0 ? 'retry' : 'done';
      },
      { concurrency: 1, baseDelayMs: 40, maxDelayMs: 1000, onError: (_k, err) => errors.push(err), clock },
    );
    q.add('k');
    // Each retry is due 40, 80, 160 ms after the run before (less up to 20% jitter), and not sooner.
    for (const backoff of [40, 80, 160]) {
      const runs = times.length;
      const last = times[runs - 1];
      await clock.advance(last + backoff * 0.8 - 1 - clock.now());
      expect(times).toHaveLength(runs);
      await clock.advance(last + backoff - clock.now());
      expect(times).toHaveLength(runs + 1);
    }
    await q.idle();
    expect(clock.pending).toBe(0); // done: no retry left scheduled
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    expect(gaps[0]).toBeGreaterThanOrEqual(32);
    expect(gaps[0]).toBeLessThanOrEqual(40);
    expect(gaps[1]).toBeGreaterThanOrEqual(64);
    expect(gaps[1]).toBeLessThanOrEqual(80);
    expect(gaps[2]).toBeGreaterThanOrEqual(128);
    expect(gaps[2]).toBeLessThanOrEqual(160);
    expect(errors).toHaveLength(1);
    expect(q.attemptsOf('k')).toBe(0);
  });

  test('an add brings a key waiting for its retry back at once; stop drops scheduled retries', async () => {
    const clock = new TestClock({ at: 1_000_000 });
    const times: number[] = [];
    const q = new KeyedQueue(
      async () => {
        times.push(clock.now());
        return 'retry';
      },
      { concurrency: 1, baseDelayMs: 10_000, maxDelayMs: 10_000, clock },
    );
    q.add('k');
    await eventually(async () => clock.pending === 1, 2000); // the first run asked for a retry, 8 to 10 s away
    q.add('k');
    expect(times).toEqual([1_000_000, 1_000_000]); // the second run came at once, no time passed
    await eventually(async () => clock.pending === 1, 2000);
    await q.stop();
    expect(clock.pending).toBe(0);
    q.add('k');
    await clock.advance(60_000);
    expect(times).toHaveLength(2);
  });

  test('the reconcile lag is the age of the oldest add not yet served: waiting or in a run; a re-add during a run counts from itself; 0 once idle', async () => {
    const clock = new TestClock({ at: 1_000_000 });
    const release = new Map<string, () => void>();
    const started: string[] = [];
    const q = new KeyedQueue(
      (key) =>
        new Promise<WorkResult>((resolve) => {
          started.push(key);
          release.set(key, () => resolve('done'));
        }),
      { concurrency: 1, baseDelayMs: 10, maxDelayMs: 100, clock },
    );
    const ran = (key: string, times: number) => eventually(async () => started.filter((k) => k === key).length >= times, 2000);
    expect(q.oldestAgeSeconds()).toBe(0);
    q.add('a'); // runs at once (at t0)
    await clock.advance(2_000);
    q.add('b'); // waits behind a (at t0 + 2 s)
    await clock.advance(3_000);
    expect(q.oldestAgeSeconds()).toBe(5); // a's run, hung for 5 s, holds the lag
    q.add('b'); // added again while waiting: still counts from its first add
    q.add('a'); // added while running: counts from now, not from a's first add
    release.get('a')!();
    await ran('b', 1);
    expect(q.oldestAgeSeconds()).toBe(3); // b running since its add at t0 + 2 s; a waiting since t0 + 5 s
    await clock.advance(1_000);
    release.get('b')!();
    await ran('a', 2);
    expect(q.oldestAgeSeconds()).toBe(1); // a's second run serves its add at t0 + 5 s
    release.get('a')!();
    await q.idle();
    expect(q.oldestAgeSeconds()).toBe(0);
    await q.stop();
  });

  test('backoffDelay doubles from the base, is capped, and jitters at most 20% down', () => {
    expect(backoffDelay(1, 500, 60_000, () => 1)).toBe(500);
    expect(backoffDelay(3, 500, 60_000, () => 1)).toBe(2000);
    expect(backoffDelay(30, 500, 60_000, () => 1)).toBe(60_000);
    expect(backoffDelay(3, 500, 60_000, () => 0)).toBe(1600);
  });
});

describe('conditions', () => {
  const t0 = new Date('2026-01-01T00:00:00.000Z');
  const t1 = new Date('2026-01-01T00:05:00.000Z');

  test('lastTransitionTime moves only when the status flips (RFC 3339)', () => {
    const first = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Refused', message: 'a', observedGeneration: 1 }, t0);
    expect(first[0].lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    const sameStatusOtherMessage = setCondition(first, { type: 'Ready', status: 'False', reason: 'PlanLimit', message: 'b', observedGeneration: 2 }, t1);
    expect(sameStatusOtherMessage[0]).toMatchObject({ reason: 'PlanLimit', lastTransitionTime: '2026-01-01T00:00:00Z' });
    const flipped = setCondition(sameStatusOtherMessage, { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'c', observedGeneration: 2 }, t1);
    expect(flipped).toHaveLength(1);
    expect(flipped[0].lastTransitionTime).toBe('2026-01-01T00:05:00Z');
  });

  test('nextStatus sets observedGeneration and extra fields; an identical status is not written again', () => {
    const ready = { status: 'True' as const, reason: 'Reconciled', message: 'm' };
    const s1 = nextStatus(undefined, 3, ready, { keyId: 'abc', secretName: 'x-server-key' }, t0);
    expect(s1).toMatchObject({ observedGeneration: 3, keyId: 'abc', secretName: 'x-server-key' });
    expect(sameStatus(s1, nextStatus(s1, 3, ready, { keyId: 'abc', secretName: 'x-server-key' }, t1))).toBe(true);
    expect(sameStatus(s1, nextStatus(s1, 4, ready, {}, t1))).toBe(false);
  });
});

test('refusal reasons come from the code, not the wording: a missing reference, a plan limit, a bad spec, anything else', () => {
  expect(refusalReason(new ManifestError('Project tests/x', 'spec.plan', 'names plan "gold", which does not exist', 'not-found'))).toBe('MissingReference');
  expect(
    refusalReason(
      new ManifestError(
        'ServerKey tests/k',
        'spec.environment',
        'This environment already has 2 live server keys, the most its plan allows.',
        'quota-exceeded',
      ),
    ),
  ).toBe('PlanLimit');
  expect(refusalReason(new ManifestError('Project tests/x', 'spec.sessionSeats', 'is 40, more than plan "free" allows (16)', 'quota-exceeded'))).toBe(
    'PlanLimit',
  );
  expect(refusalReason(new ManifestError('GameEnvironment tests/e', 'spec.appKey', '"a" is already the app key of GameEnvironment tests/f', 'conflict'))).toBe(
    'Refused',
  );
  // A spec the database's rules refuse (as docs/kubernetes.md's table says): InvalidSpec, whoever found it.
  expect(refusalReason(new ManifestError('Realm tests/r', 'spec.endAt', 'must be after startAt', 'invalid-request'))).toBe('InvalidSpec');
  expect(refusalReason(new ManifestError('GameEnvironment tests/e', 'spec.appKey', 'is immutable: it names an identity'))).toBe('InvalidSpec');
  // The wording alone decides nothing: a refusal that happens to say "does not exist" without that code is not MissingReference.
  expect(refusalReason(new ManifestError('Tour tests/t', 'spec.name', 'does not exist in this plan, which allows none', 'conflict'))).toBe('Refused');
});

test("a ServerKey's Secret name: <name>-server-key, cut with a hash when too long for Kubernetes", () => {
  expect(secretNameOf('game-server')).toBe('game-server-server-key');
  const long = 'a'.repeat(250);
  const name = secretNameOf(long);
  expect(name.length).toBeLessThanOrEqual(253);
  expect(name).toMatch(/^a+-[0-9a-f]{8}-server-key$/);
  expect(secretNameOf('b'.repeat(250))).not.toBe(name);
});

test("a watched Secret's event reconciles the resource its labels name, in its namespace, and nothing for a Secret of no one", () => {
  const secret = (labels?: Record<string, string>, namespace: string | null = 'games') => ({
    metadata: { name: 's', namespace: namespace ?? undefined, labels },
  });
  expect(ownersOf(secret({ 'app.kubernetes.io/managed-by': 'hearth-operator', 'hearth.gg/server-key': 'game-servers' }))).toEqual([
    { kind: 'ServerKey', key: 'games/game-servers' },
  ]);
  expect(ownersOf(secret({ 'app.kubernetes.io/managed-by': 'hearth-operator', 'hearth.gg/licence-key': 'studio' }))).toEqual([
    { kind: 'LicenceKey', key: 'games/studio' },
  ]);
  expect(ownersOf(secret({ 'hearth.gg/secret-for': 'starfall' }))).toEqual([{ kind: 'Project', key: 'games/starfall' }]);
  // A key label without the operator's managed-by label is someone else's Secret: no ServerKey is queued for it.
  expect(ownersOf(secret({ 'hearth.gg/server-key': 'game-servers' }))).toEqual([]);
  expect(ownersOf(secret(undefined))).toEqual([]);
  expect(ownersOf(secret({ 'hearth.gg/secret-for': 'starfall' }, null))).toEqual([]);
});

test("HEARTH_OPERATOR_WATCH_NAMESPACE: one namespace or a comma-separated list (the chart's watchNamespaces); unset, every namespace; a bad name stops the start", () => {
  const base = { DATABASE_URL: 'postgres://h@db/h', REDIS_URL: 'redis://r:6379' };
  expect(loadOperatorConfig(base).watchNamespaces).toBeUndefined();
  expect(loadOperatorConfig({ ...base, HEARTH_OPERATOR_WATCH_NAMESPACE: 'games' }).watchNamespaces).toEqual(['games']);
  expect(loadOperatorConfig({ ...base, HEARTH_OPERATOR_WATCH_NAMESPACE: 'games, tools,games' }).watchNamespaces).toEqual(['games', 'tools']);
  expect(() => loadOperatorConfig({ ...base, HEARTH_OPERATOR_WATCH_NAMESPACE: 'games,Tools' })).toThrow(/HEARTH_OPERATOR_WATCH_NAMESPACE.*"Tools"/);
  expect(() => loadOperatorConfig({ ...base, HEARTH_OPERATOR_WATCH_NAMESPACE: 'games,,tools' })).toThrow(/HEARTH_OPERATOR_WATCH_NAMESPACE/);
});

test('HEARTH_OPERATOR_PLAN_OWNER: unset or true owns the Plans, false follows them, anything else stops the start; the field manager names the release', () => {
  const base = {
    DATABASE_URL: 'postgres://h@db/h',
    REDIS_URL: 'redis://r:6379',
    HEARTH_OPERATOR_LEASE_NAMESPACE: 'games-blue',
    HEARTH_OPERATOR_LEASE_NAME: 'blue-hearth-operator',
  };
  expect(loadOperatorConfig(base).planOwner).toBe(true);
  expect(loadOperatorConfig({ ...base, HEARTH_OPERATOR_PLAN_OWNER: 'true' }).planOwner).toBe(true);
  expect(loadOperatorConfig({ ...base, HEARTH_OPERATOR_PLAN_OWNER: 'false' }).planOwner).toBe(false);
  expect(() => loadOperatorConfig({ ...base, HEARTH_OPERATOR_PLAN_OWNER: 'no' })).toThrow(/HEARTH_OPERATOR_PLAN_OWNER.*true or false.*"no"/);
  expect(loadOperatorConfig(base).fieldManager).toBe('hearth-operator/games-blue/blue-hearth-operator');
  // Within the API server's 128 characters, whatever the names.
  expect(loadOperatorConfig({ ...base, HEARTH_OPERATOR_LEASE_NAME: 'a'.repeat(200) }).fieldManager).toHaveLength(128);
});

test('hearth_operator_objects_not_ready: counts objects by kind and reason while they are not Ready; Ready, gone or missing from a fresh list, they leave it', async () => {
  const registry = new client.Registry();
  const notReady = new NotReadyObjects(declareMetrics(client, registry));
  const read = async () =>
    (await registry.getMetricsAsJSON()).find((m) => m.name === 'hearth_operator_objects_not_ready')!.values.map((v) => ({ ...v.labels, value: v.value }));
  notReady.observe('ServerKey', 'games/k1', { status: 'False', reason: 'PlanLimit' });
  notReady.observe('ServerKey', 'games/k2', { status: 'False', reason: 'PlanLimit' });
  notReady.observe('Project', 'games/p', { status: 'False', reason: 'MissingReference' });
  notReady.observe('Project', 'tools/q', { status: 'Unknown', reason: 'Retrying' });
  expect(await read()).toEqual([
    { kind: 'ServerKey', reason: 'PlanLimit', value: 2 },
    { kind: 'Project', reason: 'MissingReference', value: 1 },
    { kind: 'Project', reason: 'Retrying', value: 1 },
  ]);
  notReady.observe('ServerKey', 'games/k1', { status: 'True', reason: 'Reconciled' });
  notReady.forget('Project', 'games/p');
  notReady.retain('Project', (key) => key !== 'tools/q');
  expect(await read()).toEqual([{ kind: 'ServerKey', reason: 'PlanLimit', value: 1 }]);
  notReady.clear();
  expect(await read()).toEqual([]);
});

test("hearth_operator_queue_oldest_seconds: each kind's reconcile lag, read from its queue at each scrape (0 for an idle kind)", async () => {
  const metrics = new OperatorMetrics(false);
  try {
    const lags: Record<string, number> = { ServerKey: 42.5, Project: 0 };
    metrics.observeQueue('ServerKey', { oldestAgeSeconds: () => lags.ServerKey });
    metrics.observeQueue('Project', { oldestAgeSeconds: () => lags.Project });
    const read = async () =>
      (await metrics.registry.getMetricsAsJSON())
        .find((m) => m.name === 'hearth_operator_queue_oldest_seconds')!
        .values.map((v) => ({ ...v.labels, value: v.value }));
    expect(await read()).toEqual([
      { kind: 'ServerKey', value: 42.5 },
      { kind: 'Project', value: 0 },
    ]);
    lags.ServerKey = 0;
    lags.Project = 7;
    expect(await read()).toEqual([
      { kind: 'ServerKey', value: 0 },
      { kind: 'Project', value: 7 },
    ]);
  } finally {
    metrics.stopProcessMetrics();
  }
});

test("hearth_operator_terminating_*: objects deleted that still carry Hearth's finalizer, and the oldest one's age from its deletionTimestamp; finished, gone or missing from a fresh list, they leave it", async () => {
  const registry = new client.Registry();
  let now = Date.parse('2026-12-10T12:00:00Z');
  const terminating = new TerminatingObjects(declareMetrics(client, registry), () => now);
  const object = (name: string, deletionTimestamp?: string, finalizers = ['hearth.gg/cleanup']): CustomObject =>
    ({ apiVersion: 'hearth.gg/v1alpha1', kind: 'ServerKey', metadata: { name, namespace: 'games', deletionTimestamp, finalizers }, spec: {} }) as CustomObject;
  const read = async () => {
    const json = await registry.getMetricsAsJSON();
    const of = (name: string) => json.find((m) => m.name === name)!.values.map((v) => ({ ...v.labels, value: v.value }));
    return { count: of('hearth_operator_terminating_objects'), oldest: of('hearth_operator_terminating_oldest_seconds') };
  };
  terminating.follow('ServerKey', 'games/k1', object('k1', '2026-12-10T11:40:00Z'));
  terminating.follow('ServerKey', 'games/k2', object('k2', '2026-12-10T11:55:00Z'));
  terminating.follow('ServerKey', 'games/k3', object('k3')); // not deleted
  terminating.follow('ServerKey', 'games/k4', object('k4', '2026-12-10T11:00:00Z', ['someone.else/finalizer'])); // Hearth's part done
  terminating.follow('GameEnvironment', 'games/live', object('live', '2026-12-10T11:59:00Z'));
  expect(await read()).toEqual({
    count: [
      { kind: 'ServerKey', value: 2 },
      { kind: 'GameEnvironment', value: 1 },
    ],
    oldest: [
      { kind: 'ServerKey', value: 1200 },
      { kind: 'GameEnvironment', value: 60 },
    ],
  });
  now += 60_000; // the age grows between scrapes without a reconcile
  expect((await read()).oldest).toEqual([
    { kind: 'ServerKey', value: 1260 },
    { kind: 'GameEnvironment', value: 120 },
  ]);
  // k1's finalizer taken off by someone else: the next reconcile sees it without; k2's clean-up finished.
  terminating.follow('ServerKey', 'games/k1', object('k1', '2026-12-10T11:40:00Z', []));
  terminating.forget('ServerKey', 'games/k2');
  terminating.retain('GameEnvironment', (key) => key !== 'games/live');
  expect(await read()).toEqual({
    count: [
      { kind: 'ServerKey', value: 0 },
      { kind: 'GameEnvironment', value: 0 },
    ],
    oldest: [
      { kind: 'ServerKey', value: 0 },
      { kind: 'GameEnvironment', value: 0 },
    ],
  });
  terminating.follow('ServerKey', 'games/k1', object('k1', '2026-12-10T11:40:00Z'));
  terminating.clear();
  expect(await read()).toEqual({ count: [], oldest: [] });
});
