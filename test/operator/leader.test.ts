/**
 * Leader election on a real kube-apiserver: of two `hearth operator` replicas exactly one holds the
 * Lease and says so; killed (no goodbye), the other takes over once the lease expires; stopped
 * cleanly, it releases the Lease and the next replica takes over at once; a leader whose Lease is
 * taken from it stops (exits 1) instead of reconciling beside the new holder.
 */
import { type Kube, startKube } from '../support/kube';
import { type TestDatabase, createTestDatabase } from '../support/harness';
import { type OperatorProcess, getJson, isLeader, kubectl, startOperatorProcess, waitUntil } from './operator-process';

jest.setTimeout(120_000);

let kube: Kube;
let database: TestDatabase;
const started: OperatorProcess[] = [];

beforeAll(async () => {
  [kube, database] = await Promise.all([startKube(), createTestDatabase()]);
});
afterAll(async () => {
  await Promise.all(started.map((op) => op.stop('SIGKILL')));
  await database?.drop();
  await kube?.stop();
});

async function replica(env: Record<string, string> = {}): Promise<OperatorProcess> {
  const op = await startOperatorProcess({ kube, databaseUrl: database.url, redisPrefix: 'hearth-test:operator-leader:', env });
  started.push(op);
  return op;
}

const lease = () => getJson(kube, ['lease', 'hearth-operator', '-n', 'default']);

/** Which of `ops` report leading, sampled until exactly one does. */
async function theLeader(ops: OperatorProcess[], withinMs: number): Promise<OperatorProcess> {
  return waitUntil(
    'exactly one leader',
    async () => {
      const leading = (await Promise.all(ops.map(isLeader))).map((l, i) => (l ? ops[i] : null)).filter(Boolean);
      return leading.length === 1 ? leading[0]! : undefined;
    },
    withinMs,
  );
}

test('one of two replicas leads; killed, the other takes over; stopped cleanly, it hands the Lease over at once', async () => {
  const a = await replica();
  const b = await replica();
  const first = await theLeader([a, b], 30_000);
  const second = first === a ? b : a;
  expect((await lease()).spec.holderIdentity).toMatch(/_[0-9a-f]{8}$/);

  // For a few lease rounds, never both.
  for (let i = 0; i < 10; i += 1) {
    const both = (await Promise.all([isLeader(a), isLeader(b)])).every(Boolean);
    expect(both).toBe(false);
    await new Promise((r) => setTimeout(r, 200));
  }
  const probes = await fetch(`http://127.0.0.1:${second.metricsPort}/readyz`);
  expect(probes.status).toBe(200); // a standby is ready too: it is healthy, only not leading
  expect((await fetch(`http://127.0.0.1:${second.metricsPort}/healthz`)).status).toBe(200);

  const before = (await lease()).spec;
  await first.stop('SIGKILL');
  const killedAt = Date.now();
  await waitUntil('the standby leads', async () => ((await isLeader(second)) ? true : undefined), 20_000);
  const after = (await lease()).spec;
  expect(after.holderIdentity).not.toBe(before.holderIdentity);
  expect(after.leaseTransitions).toBe((before.leaseTransitions ?? 0) + 1);
  // It waited for the killed leader's lease (4 s) to run out.
  expect(Date.now() - killedAt).toBeGreaterThanOrEqual(3_000);

  const third = await replica();
  await new Promise((r) => setTimeout(r, 1500));
  expect(await isLeader(third)).toBe(false);
  await second.stop('SIGTERM');
  expect((await second.exited).code).toBe(0);
  const releasedAt = Date.now();
  // Released by its holder as it stopped: no holder, a one-second lease, so no standby waits out the 4 s.
  const released = (await lease()).spec;
  if (released.holderIdentity)
    expect(released.holderIdentity).not.toBe(after.holderIdentity); // the third already took it
  else expect(released.leaseDurationSeconds).toBe(1);
  expect(second.log()).toMatch(/released the lease/);
  await waitUntil('the third replica leads', async () => ((await isLeader(third)) ? true : undefined), 10_000, 100);
  // Acquired well within the 4 s the lease would have run: the time the third wrote when it took the
  // Lease, not when this test saw it lead (which waits on its first sync on a loaded machine).
  const taken = (await lease()).spec;
  expect(taken.holderIdentity).not.toBe(after.holderIdentity);
  expect(Date.parse(taken.acquireTime)).toBeGreaterThan(Date.parse(after.acquireTime)); // a new acquisition
  expect(Date.parse(taken.acquireTime) - releasedAt).toBeLessThan(3_000);
  await third.stop('SIGTERM');
});

test('a leader whose Lease is taken from it stops at once (exit 1) rather than reconcile beside the new holder', async () => {
  const op = await replica();
  await waitUntil('it leads', async () => ((await isLeader(op)) ? true : undefined), 20_000);
  // Another holder writes the Lease and keeps renewing it, one write after another, until the test
  // ends; the test waits for the last one, so none is left talking to an API server afterAll stopped.
  const usurp = async () => {
    const current = await lease();
    current.spec.holderIdentity = 'intruder';
    current.spec.renewTime = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    await kubectl(kube, ['replace', '-f', '-'], JSON.stringify(current));
  };
  let usurping = true;
  const usurper = (async () => {
    while (usurping) {
      // A write that loses to the operator's renewal (a conflict) is tried again next round.
      await usurp().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  try {
    const takenAt = Date.now();
    const exit = await Promise.race([op.exited, new Promise<null>((r) => setTimeout(() => r(null), 15_000))]);
    expect(exit).toEqual({ code: 1, signal: null });
    // The renew deadline is two thirds of the 4 s lease: it stopped before the intruder's own lease could be doubted.
    expect(Date.now() - takenAt).toBeLessThan(8_000);
    expect(op.log()).toMatch(/lost the lease/);
  } finally {
    usurping = false;
    await usurper;
  }
});
