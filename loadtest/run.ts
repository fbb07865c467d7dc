/**
 * `make loadtest` (`node --import tsx loadtest/run.ts [--profile smoke|full]`): the real k6 against a
 * real Hearth on this machine, then a summary table; exits non-zero when a threshold fails.
 *
 * 1. k6 from the tools folder (test/kube/tools/build.sh builds it once per machine: `make kube-tools`).
 * 2. A fresh PostgreSQL database, migrated by `hearth migrate`, and loadtest/manifests.yaml applied by
 *    `hearth apply -f` (the plans, projects, environments, server keys, flags, currency and products),
 *    the project's store pointed at the stand-in store (test/support/store-standin.ts) this runner
 *    starts, which approves every order at once and knows a ticket for each player k6 signs in.
 * 3. `hearth api` and `hearth realtime` as processes of their own, on free ports, sharing a Redis
 *    prefix of this run (rate limits and fan-out through the local Redis), logging at info to
 *    $TMPDIR/hearth-loadtest/<run>/ (kept when the run fails; a passing run keeps only its summary).
 * 4. k6 runs loadtest/k6/hearth.ts with the profile; its summary (JSON, written by handleSummary) is
 *    printed as one table, with every failed threshold and check named.
 * 5. The processes are stopped, the database dropped and the run's Redis keys deleted, whatever happened.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KUBE_TOOLS_BIN } from '../test/support/kube';
import { freePort } from '../test/support/ports';
import { type HearthService, hearthEnv, logTail, makeScratchRun, runHearthLogged, startHearthService, waitReady } from '../test/support/hearth-process';
import { stopProcess } from '../test/support/processes';
import { StoreStandIn } from '../test/support/store-standin';
import { PROFILES, type ProfileName, SCENARIO_ENDPOINTS } from './k6/profiles';

const ROOT = path.resolve(__dirname, '..');
const SCRIPT = path.join(ROOT, 'loadtest/k6/hearth.ts');
const MANIFESTS = path.join(ROOT, 'loadtest/manifests.yaml');
/** The credential limit of the `loadtest-limited` plan in loadtest/manifests.yaml. */
const LIMITED_PER_MINUTE = 30;
/** The store settings of loadtest/manifests.yaml: the address replaced by the stand-in's, the app and identity its tickets name. */
const STORE_PLACEHOLDER = 'baseUrl: "http://127.0.0.1:1"';
const STORE_APP_ID = 480;
const STORE_IDENTITY = 'hearth-load';

/**
 * The stand-in store of the run: approves every order at once, and knows one ticket per player k6's
 * setup signs in (`load-player-<i>`, each a store account with a USD wallet).
 */
async function startStore(players: number): Promise<{ store: StoreStandIn; key: string; tickets: string[] }> {
  const key = `load-${randomBytes(8).toString('hex')}`;
  const store = await new StoreStandIn([key]).start();
  store.autoApprove = true;
  const tickets = Array.from({ length: players }, (_, i) => {
    const steamId = (76561197960265728n + BigInt(i)).toString();
    store.setUser(steamId, { country: 'US', currency: 'USD', status: 'Active' });
    return store.issueTicket(steamId, { identity: STORE_IDENTITY, appid: STORE_APP_ID });
  });
  return { store, key, tickets };
}

class LoadTestError extends Error {}

const fail = (message: string) => new LoadTestError(message);
const runHearth = (args: string[], env: NodeJS.ProcessEnv, log: string) => runHearthLogged(args, env, log, fail);

function k6Path(): string {
  const file = path.join(KUBE_TOOLS_BIN, 'k6');
  if (!fs.existsSync(file)) {
    throw new LoadTestError(`${file} is missing: run \`make kube-tools\` (test/kube/tools/build.sh builds k6 once per machine)`);
  }
  return file;
}

function parseProfile(argv: string[]): ProfileName {
  const i = argv.indexOf('--profile');
  const name = i >= 0 ? argv[i + 1] : 'smoke';
  if (!(name in PROFILES)) throw new LoadTestError(`--profile must be one of ${Object.keys(PROFILES).join(', ')}, got ${name}`);
  return name as ProfileName;
}

function runK6(binary: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

// ---------------------------------------------------------------------------------------------------
// The summary table, from k6's summary JSON (handleSummary's `data`).

interface Metric {
  type: string;
  values: Record<string, number>;
  thresholds?: Record<string, { ok: boolean }>;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows
    .map((r, i) => {
      const line = r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
      return i === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

const ms = (v: number | undefined) => (v === undefined ? '-' : v < 10 ? v.toFixed(2) : v.toFixed(1));

function thresholdCounts(metrics: Record<string, Metric>, names: string[]): { passed: number; total: number } {
  let passed = 0;
  let total = 0;
  for (const name of names) {
    for (const t of Object.values(metrics[name]?.thresholds ?? {})) {
      total++;
      if (t.ok) passed++;
    }
  }
  return { passed, total };
}

/** Prints the table and every failed threshold and check; answers how many thresholds failed. */
function report(summary: any, profile: ProfileName): number {
  const metrics: Record<string, Metric> = summary.metrics;
  const seconds = PROFILES[profile].seconds;
  const rows = [['scenario', 'endpoint', 'requests', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'errors', 'thresholds']];
  for (const [scenario, endpoints] of Object.entries(SCENARIO_ENDPOINTS)) {
    for (const endpoint of endpoints) {
      const reqs = metrics[`http_reqs{endpoint:${endpoint}}`]?.values;
      const duration = metrics[`http_req_duration{endpoint:${endpoint}}`]?.values;
      const failed = metrics[`http_req_failed{endpoint:${endpoint}}`]?.values;
      const t = thresholdCounts(metrics, [
        `http_reqs{endpoint:${endpoint}}`,
        `http_req_duration{endpoint:${endpoint}}`,
        `http_req_failed{endpoint:${endpoint}}`,
      ]);
      rows.push([
        scenario,
        endpoint,
        String(reqs?.count ?? 0),
        // The rate-limit scenario waits for the clock: its rate says nothing.
        scenario === 'rate_limit' ? '-' : ((reqs?.count ?? 0) / seconds).toFixed(1),
        ms(duration?.med),
        ms(duration?.['p(95)']),
        ms(duration?.['p(99)']),
        failed ? `${(failed.rate * 100).toFixed(2)}%` : '-',
        `${t.passed}/${t.total} passed`,
      ]);
    }
    const checks = metrics[`checks{scenario:${scenario}}`]?.values;
    const t = thresholdCounts(metrics, [`checks{scenario:${scenario}}`, `http_reqs{scenario:${scenario}}`]);
    rows.push([
      scenario,
      '(checks)',
      String((checks?.passes ?? 0) + (checks?.fails ?? 0)),
      '',
      '',
      '',
      '',
      checks ? `${checks.fails ?? 0} failed` : '-',
      `${t.passed}/${t.total} passed`,
    ]);
  }
  const frames = metrics.session_frame_ms?.values;
  const t = thresholdCounts(metrics, ['session_frame_ms', 'session_frames_missing']);
  rows.push([
    'lobby',
    'HTTP change → frame',
    String(frames?.count ?? 0),
    '',
    ms(frames?.med),
    ms(frames?.['p(95)']),
    ms(frames?.['p(99)']),
    `${metrics.session_frames_missing?.values.count ?? 0} missing`,
    `${t.passed}/${t.total} passed`,
  ]);
  console.log(`\nHearth load test, profile ${profile} (${seconds} s per scenario, all at once)\n`);
  console.log(table(rows));

  const failedThresholds: string[] = [];
  let total = 0;
  for (const [name, metric] of Object.entries(metrics)) {
    for (const [expression, t] of Object.entries(metric.thresholds ?? {})) {
      total++;
      if (!t.ok) failedThresholds.push(`${name}: ${expression} (${JSON.stringify(metric.values)})`);
    }
  }
  const failedChecks: string[] = [];
  const walk = (group: any) => {
    for (const c of group.checks ?? []) if (c.fails > 0) failedChecks.push(`${c.name}: ${c.fails} failed of ${c.passes + c.fails}`);
    for (const g of group.groups ?? []) walk(g);
  };
  walk(summary.root_group ?? {});
  const dropped = metrics.dropped_iterations?.values.count ?? 0;
  console.log(`\nIterations k6 could not start on time (no VU free): ${dropped}.`);
  console.log(`${total - failedThresholds.length} of ${total} thresholds passed.`);
  if (failedThresholds.length) console.log(`Failed thresholds:\n  ${failedThresholds.join('\n  ')}`);
  if (failedChecks.length) console.log(`Failed checks:\n  ${failedChecks.join('\n  ')}`);
  return failedThresholds.length;
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const profile = parseProfile(process.argv.slice(2));
  const k6 = k6Path();
  const run = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
  const logs = path.join(os.tmpdir(), 'hearth-loadtest', run);
  fs.mkdirSync(logs, { recursive: true });
  console.log(`load test ${profile}: logs in ${logs}`);

  const scratch = await makeScratchRun('load', fail);
  const services: HearthService[] = [];
  const { store, key: storeKey, tickets } = await startStore(PROFILES[profile].players);
  try {
    const manifests = fs.readFileSync(MANIFESTS, 'utf8');
    if (!manifests.includes(STORE_PLACEHOLDER)) throw new LoadTestError(`${MANIFESTS} has no \`${STORE_PLACEHOLDER}\` for the stand-in store's address`);
    const applying = path.join(logs, 'manifests.yaml');
    fs.writeFileSync(applying, manifests.replace(STORE_PLACEHOLDER, `baseUrl: "${store.url}"`));
    const base = {
      ...scratch.env,
      LOG_LEVEL: 'info',
      // As behind the ingress: the client's address is the X-Forwarded-For k6 sends (loadtest/k6/api.ts clientAddress).
      HEARTH_TRUSTED_PROXIES: 'loopback',
    };
    await runHearth(['migrate', '--json'], hearthEnv(base), path.join(logs, 'migrate.log'));
    const applied = JSON.parse(await runHearth(['apply', '-f', applying, '--json'], hearthEnv({ ...base, LOG_LEVEL: 'warn' }), path.join(logs, 'apply.log')));
    const keyOf = (name: string): string => {
      const key = applied.results.find((r: any) => r.kind === 'ServerKey' && r.name === name)?.serverKey?.key;
      if (!key) throw new LoadTestError(`hearth apply minted no key for ServerKey ${name}`);
      return key;
    };

    const [apiPort, apiMetrics, rtPort, rtMetrics] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const api = startHearthService(
      'hearth api',
      ['api'],
      hearthEnv({ ...base, PORT: String(apiPort), METRICS_PORT: String(apiMetrics), HEARTH_LOAD_STORE_KEY: storeKey }),
      path.join(logs, 'api.log'),
    );
    services.push(api);
    const realtime = startHearthService(
      'hearth realtime',
      ['realtime'],
      hearthEnv({ ...base, REALTIME_PORT: String(rtPort), METRICS_PORT: String(rtMetrics) }),
      path.join(logs, 'realtime.log'),
    );
    services.push(realtime);
    await Promise.all([waitReady(api, `http://127.0.0.1:${apiPort}/readyz`, fail), waitReady(realtime, `http://127.0.0.1:${rtPort}/readyz`, fail)]);

    const summaryFile = path.join(logs, 'summary.json');
    const vars: Record<string, string> = {
      HEARTH_BASE: `http://127.0.0.1:${apiPort}/v1`,
      HEARTH_REALTIME_ORIGIN: `ws://127.0.0.1:${rtPort}`,
      HEARTH_SERVER_KEY: keyOf('load-live-key'),
      HEARTH_LIMITED_SERVER_KEY: keyOf('load-limited-key'),
      HEARTH_LIMITED_PER_MINUTE: String(LIMITED_PER_MINUTE),
      HEARTH_LOAD_PROFILE: profile,
      HEARTH_SUMMARY_FILE: summaryFile,
      HEARTH_STORE_TICKETS: JSON.stringify(tickets),
    };
    const args = ['run', '--quiet', '--no-color', ...Object.entries(vars).flatMap(([k, v]) => ['-e', `${k}=${v}`]), SCRIPT];
    const code = await runK6(k6, args);

    // A process that died under load fails the run even if k6 somehow passed.
    for (const s of services) {
      if (s.child.exitCode !== null) throw new LoadTestError(`${s.name} exited with ${s.child.exitCode} during the run:\n${logTail(s.log)}`);
    }
    // 0: every threshold held; 99: some threshold failed (the table says which). Anything else is
    // the script or setup failing (107: an exception, e.g. a sign-in refused), so no figure means anything.
    if ((code !== 0 && code !== 99) || !fs.existsSync(summaryFile)) {
      throw new LoadTestError(`k6 exited with ${code}${code === 107 ? ' (the script or its setup threw: the error is above)' : ''}; nothing was measured`);
    }
    const failed = report(JSON.parse(fs.readFileSync(summaryFile, 'utf8')), profile);
    if (code !== 0) {
      console.error(
        `\nLOAD TEST FAILED: k6 exited with ${code}${code === 99 ? ' (thresholds failed)' : ''}${failed ? `, ${failed} threshold(s) failed` : ''}. Logs: ${logs}`,
      );
      return 1;
    }
    // The access logs of a passing run are large (about 60 MB for the full profile) and say nothing more.
    for (const file of ['api.log', 'realtime.log']) fs.rmSync(path.join(logs, file), { force: true });
    console.log(`\nload test ${profile} passed. Summary: ${summaryFile}`);
    return 0;
  } finally {
    await Promise.all(services.map((service) => stopProcess(service.child, 10_000)));
    await store.stop();
    await scratch.drop();
  }
}

// Ctrl-C reaches k6 too, which stops and still writes its summary: stay to report and clean up.
process.on('SIGINT', () => console.error('\ninterrupted: k6 stops, then the processes, database and Redis keys are cleaned up'));

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`\nLOAD TEST FAILED: ${err instanceof LoadTestError ? err.message : (err?.stack ?? err)}`);
    process.exit(1);
  },
);
