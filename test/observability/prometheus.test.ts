/**
 * A real Prometheus scraping a running Hearth (the API, a realtime process, the crash worker's and a
 * leading operator's metrics, each on its own metrics port, labelled as the chart's ServiceMonitor would), after some
 * traffic: every alert expression and every dashboard panel's PromQL evaluates without error, and the
 * key ones answer data.
 */
import { CrashWorkerMetrics } from '@hearth/crash-worker';
import { closeServer, startMetricsServer } from '@hearth/core/process';
import { OperatorMetrics } from '../../operator/src/metrics';
import { type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { environment, plan, project, serverKey, standardManifests } from '../support/manifests';
import { Client, type RealtimeInstance, startRealtime } from '../realtime/support';
import { type PrometheusServer, dashboardQueries, renderedRuleGroups, startPrometheus, withGrafanaVariables } from './prometheus';

const NAMESPACE = 'hearth-system';
const RATE_INTERVAL = '30s';

let h: Harness;
let rt: RealtimeInstance;
let worker: Awaited<ReturnType<typeof startMetricsServer>>;
let operatorMetrics: OperatorMetrics;
let operator: Awaited<ReturnType<typeof startMetricsServer>>;
let prometheus: PrometheusServer;

jest.setTimeout(60_000);

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      plan('tiny', { requestsPerMinutePerCredential: 2 }),
      project('tiny', { plan: 'tiny' }),
      environment('tiny-live', 'tiny'),
      serverKey('tiny-live-key', 'tiny-live'),
    ],
  });
  rt = await startRealtime(h, { tickMs: 100 });
  worker = await startMetricsServer(new CrashWorkerMetrics(h.db, false).registry, 0, '127.0.0.1');
  // The operator's series as its leader answers them (no cluster here: no kind reconciled).
  operatorMetrics = new OperatorMetrics(false, { db: h.db });
  operatorMetrics.leader.set(1);
  operator = await startMetricsServer(operatorMetrics.registry, 0, '127.0.0.1');
  const target = (url: string, service: string) => ({ url, labels: { namespace: NAMESPACE, service, pod: `${service}-0` } });
  prometheus = await startPrometheus([
    target(h.api.metricsUrl!, 'hearth-api'),
    target(rt.metricsUrl!, 'hearth-realtime'),
    target(worker.url, 'hearth-crash-worker'),
    target(operator.url, 'hearth-operator'),
  ]);
});
afterAll(async () => {
  await prometheus?.stop();
  if (worker) await closeServer(worker.server);
  if (operator) await closeServer(operator.server);
  operatorMetrics?.stopProcessMetrics();
  await rt?.stop();
  await h?.close();
});

/** A round of the hot paths: reads, refusals, a 429, a socket seeing a session change. */
async function traffic(round: number): Promise<void> {
  const key = h.serverKeys['alpha-live-key'];
  const { accessToken } = await signIn(h.base, key, `prom-${round}`, 'host');
  for (let i = 0; i < 5; i++) await call(h.base, 'GET', '/players/me', { token: accessToken });
  await call(h.base, 'GET', '/players/me');
  const tiny = await signIn(h.base, h.serverKeys['tiny-live-key'], `tiny-${round}`);
  for (let i = 0; i < 3; i++) await call(h.base, 'GET', '/players/me', { token: tiny.accessToken });
  await call(h.base, 'PUT', '/players/me/data/slot', { token: accessToken, body: { data: { round } } });
  const socket = await Client.authorized(rt.url, accessToken);
  await call(h.base, 'POST', '/sessions', { token: accessToken, body: { gameMode: 'duel', map: 'harbour' } });
  await socket.next();
  socket.ws.close(1000);
}

/** Waits until `promql` answers at least one series (Prometheus has scraped what the traffic did). */
async function waitForData(promql: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await prometheus.query(promql)).result.length === 0) {
    if (Date.now() > deadline) throw new Error(`no data for ${promql} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('every alert expression and every dashboard panel evaluates on a real Prometheus scraping Hearth, the key ones with data', async () => {
  await traffic(1);
  await new Promise((r) => setTimeout(r, 2500)); // a few scrapes between the rounds: the rates see increases
  await traffic(2);
  await waitForData(`sum(rate(hearth_http_requests_total{namespace="${NAMESPACE}"}[${RATE_INTERVAL}])) > 0`);
  await waitForData(`hearth_realtime_event_lag_seconds_count{namespace="${NAMESPACE}"} >= 2`);

  const failures: string[] = [];
  const evaluate = async (what: string, promql: string) => {
    try {
      return await prometheus.query(promql);
    } catch (err) {
      failures.push(`${what}: ${(err as Error).message}\n  ${promql}`);
      return null;
    }
  };
  const rules = renderedRuleGroups().flatMap((g) => g.rules);
  for (const rule of rules) await evaluate(`alert ${rule.alert}`, rule.expr);
  const panels = dashboardQueries();
  expect(panels.length).toBeGreaterThan(40);
  for (const p of panels) await evaluate(`${p.dashboard} "${p.panel}"`, withGrafanaVariables(p.expr, { namespace: NAMESPACE, rateInterval: RATE_INTERVAL }));
  expect(failures).toEqual([]);

  // The key panels answer numbers, not just no error. A rate needs two scrapes that saw the counter
  // move: a panel is asked again (for at most 15 s) until it shows the traffic, which a loaded
  // machine may take a scrape or two longer to show.
  const value = async (dashboard: string, panel: string, target = 0, shows: (values: number[]) => boolean = () => true) => {
    const q = panels.filter((p) => p.dashboard === dashboard && p.panel === panel)[target];
    if (!q) throw new Error(`no panel "${panel}" in ${dashboard}`);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const answer = await prometheus.query(withGrafanaVariables(q.expr, { namespace: NAMESPACE, rateInterval: RATE_INTERVAL }));
      const values = answer.result.map((r) => Number(r.value[1]));
      if (shows(values) || Date.now() > deadline) return values;
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  const someAboveZero = (values: number[]) => values.some((v) => v > 0);
  expect((await value('hearth-overview.json', 'API requests /s', 0, someAboveZero))[0]).toBeGreaterThan(0);
  const p99 = (await value('hearth-api.json', 'p50 / p95 / p99 (all routes)', 2, someAboveZero))[0];
  expect(p99).toBeGreaterThan(0);
  expect(p99).toBeLessThan(5);
  expect((await value('hearth-api.json', 'Rate-limit refusals /s by limit', 0, someAboveZero)).some((v) => v > 0)).toBe(true);
  expect((await value('hearth-api.json', 'Credentials /s by kind and outcome', 0, someAboveZero)).some((v) => v > 0)).toBe(true);
  expect((await value('hearth-realtime.json', 'Fan-out latency (API commit → frames sent)', 1, someAboveZero))[0]).toBeGreaterThan(0);
  expect((await value('hearth-economy.json', 'Save writes /s', 0, someAboveZero)).some((v) => v > 0)).toBe(true);
  expect((await value('hearth-workers.json', 'Queue depth')).length).toBe(2);
  expect((await value('hearth-overview.json', 'PostgreSQL pool')).length).toBe(3);
  // With this quiet traffic, no alert would fire: each expression answers no series.
  for (const rule of rules.filter((r) => r.alert !== 'HearthTargetDown')) {
    expect({ alert: rule.alert, firing: (await prometheus.query(rule.expr)).result }).toEqual({ alert: rule.alert, firing: [] });
  }
  expect((await prometheus.query(rules.find((r) => r.alert === 'HearthTargetDown')!.expr)).result).toEqual([]);
});
