/**
 * The commerce report job in the worker fleet as it runs: two real `hearth crash-worker` processes
 * over the test's database and the stand-in store. A refund in the store's report is applied once
 * (one runner per project), both workers' metrics say what they did, and SIGTERM stops them cleanly.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Harness, startHarness } from '../support/harness';
import { StoreStandIn } from '../support/store-standin';
import { eventually } from '../support/wait';
import { freePort, spawnHearth } from '../cli/run-hearth';
import { STORE_KEY, STORE_KEY_VARIABLE, authorize, commerceManifests, identifiedBuyer, order } from './helpers';

jest.setTimeout(60_000);

let h: Harness;
let store: StoreStandIn;
let folder: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  process.env[STORE_KEY_VARIABLE] = STORE_KEY;
  store = await new StoreStandIn([STORE_KEY]).start();
  h = await startHarness({ manifests: commerceManifests(store) });
  folder = await mkdtemp(path.join(os.tmpdir(), 'hearth-report-worker-'));
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await h?.close();
  await store?.stop();
  await rm(folder, { recursive: true, force: true });
});

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });

async function startWorker(): Promise<{ child: ChildProcess; metricsPort: number; output: () => string }> {
  const metricsPort = await freePort();
  const child = spawnHearth(['crash-worker'], {
    DATABASE_URL: h.database.url,
    OBJECT_STORAGE_URL: pathToFileURL(folder).href,
    METRICS_PORT: String(metricsPort),
    COMMERCE_REPORT_INTERVAL_SECONDS: '0.3',
    HEARTH_MASTER_KEY: h.masterKey.toString('base64'),
    [STORE_KEY_VARIABLE]: STORE_KEY,
  });
  started.push(child);
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`the worker exited: ${output}`);
      return fetch(`http://127.0.0.1:${metricsPort}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    },
    30_000,
    100,
  );
  return { child, metricsPort, output: () => output };
}

/** The sum of a metric's series whose labels include `labels`, as the worker serves it. */
async function metric(port: number, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

test('two hearth crash-worker processes: a refund in the report is applied once, the metrics say so, SIGTERM stops them', async () => {
  const buyer = await identifiedBuyer(h, store);
  const made = await order(h, buyer, { sku: 'gem-bundle', provider: 'steam', language: 'en' });
  store.authorize(made.body.storeOrderId, true);
  expect((await authorize(h, buyer, made.body.storeOrderId)).body.order.status).toBe('completed');

  const workers = [await startWorker(), await startWorker()];
  store.settle(made.body.storeOrderId, 'Refunded');
  await eventually(async () => (await h.db('commerce_orders').where({ id: made.body.id }).first()).status === 'refunded', 20_000, 100);
  // A few more ticks of both: the order is read again and again, and nothing changes.
  const reads = store.count('GetReport');
  await eventually(async () => store.count('GetReport') >= reads + 6, 20_000, 100);

  const ledger = await h.db('ledger_entries').where({ player_id: buyer.id }).orderBy('id');
  expect(ledger.map((e) => [Number(e.amount), e.reason])).toEqual([
    [100, 'commerce'],
    [-100, 'commerce-refund'],
  ]);
  expect(
    (await h.db('commerce_grant_changes as c').join('commerce_entitlements as e', 'e.id', 'c.entitlement_id').where('e.order_id', made.body.id))
      .map((c) => c.change)
      .sort(),
  ).toEqual(['granted', 'revoked']);

  let revoked = 0;
  for (const w of workers) {
    revoked += await metric(w.metricsPort, 'hearth_commerce_report_orders_total', { action: 'revoked', status: 'refunded' });
    expect(await metric(w.metricsPort, 'hearth_commerce_report_runs_total', { outcome: 'succeeded' })).toBeGreaterThan(0);
    expect(await metric(w.metricsPort, 'hearth_commerce_report_last_success_timestamp_seconds')).toBeGreaterThan(0);
    expect(await metric(w.metricsPort, 'hearth_commerce_report_cursor_lag_seconds', { project: 'shop' })).toBeLessThan(60);
  }
  expect(revoked).toBe(1);

  for (const w of workers) w.child.kill('SIGTERM');
  for (const w of workers) expect({ ...(await exited(w.child)), output: w.output() }).toEqual({ code: 0, signal: null, output: expect.any(String) });
});
