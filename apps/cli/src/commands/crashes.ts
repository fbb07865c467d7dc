import { ConfigError } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import { closeServer, startMetricsServer } from '@hearth/core/process';
import { crashUploadCounts, getCrash, getCrashIssue, listCrashIssues } from '@hearth/core/crashes';
import { openObjectStore } from '@hearth/core/storage';
import { CrashWorkerMetrics, loadCrashWorkerConfig, startCrashWorker, startStoreReport } from '@hearth/crash-worker';
import { CliError, emit, table } from '../output';
import { commandLogger, connect, withRuntime } from '../runtime';
import { onShutdown } from '../serving';
import { environmentOrFail } from './admin';

/**
 * `hearth crash-worker`: works the crash-upload queue (docs/crashes.md, "The worker") and runs the
 * commerce report job (docs/commerce.md "Background reconciliation"). Metrics and probes on
 * METRICS_PORT; SIGTERM stops taking jobs and lets the ones in hand finish.
 */
export async function runCrashWorker(): Promise<void> {
  const config = loadCrashWorkerConfig(process.env);
  const objectStore = openObjectStore(config.base.objectStorage);
  if (!objectStore) throw new ConfigError('OBJECT_STORAGE_URL', 'is required (s3://BUCKET[/PREFIX] or file:///ABSOLUTE/FOLDER)');
  const logger = commandLogger('crash-worker', config.base.logLevel).child({ component: 'crash-worker' });
  const { db, coordination, close } = connect(config.base, logger);
  const metrics = new CrashWorkerMetrics(db);
  let stopping = false;
  const worker = await startCrashWorker({ db, databaseUrl: config.base.databaseUrl, objectStore, logger, settings: config.settings, metrics });
  const storeReport = startReportJob(config, { db, coordination, logger, metrics });
  const probes = await startMetricsServer(metrics.registry, config.base.metricsPort, '0.0.0.0', {
    readiness: () => (stopping ? { ready: false, reason: 'stopping' } : { ready: true }),
  });
  logger.info({ metrics: probes.url }, 'crash worker listening for metrics');
  onShutdown(logger, async () => {
    stopping = true;
    await storeReport?.stop();
    await worker.stop();
    await closeServer(probes.server, { dropAll: true });
    await close();
  });
}

/**
 * The commerce report job, over a HearthCore of its own (never started: the job needs the commerce
 * service and the master key's keys to open the publisher keys the operator sealed, none of the
 * caches). Without HEARTH_MASTER_KEY it does not run, and says so.
 */
function startReportJob(
  config: ReturnType<typeof loadCrashWorkerConfig>,
  deps: Pick<ReturnType<typeof connect>, 'db' | 'coordination'> & { logger: ReturnType<typeof commandLogger>; metrics: CrashWorkerMetrics },
) {
  if (!config.storeReport) return null;
  const masterKey = config.base.masterKey;
  if (!masterKey) {
    deps.logger.warn('the commerce report job is off: it needs HEARTH_MASTER_KEY (set COMMERCE_REPORT_INTERVAL_SECONDS=0 to say it is off on purpose)');
    return null;
  }
  const core = new HearthCore({ db: deps.db, coordination: deps.coordination, masterKey, logger: deps.logger });
  return startStoreReport({
    db: deps.db,
    logger: deps.logger,
    settings: config.storeReport,
    metrics: deps.metrics,
    commerce: core.commerce,
    clock: core.clock,
  });
}

const LIMIT_MAX = 200;

function limitOf(raw: string | undefined, fallback: number): number {
  const limit = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX) throw new CliError(`--limit must be a whole number from 1 to ${LIMIT_MAX}`);
  return limit;
}

/** `hearth crashes list`: the environment's issues, most recently seen first, and its uploads by state. */
export async function runCrashesList(opts: { environment: string; limit?: string; json?: boolean }): Promise<void> {
  const limit = limitOf(opts.limit, 50);
  await withRuntime({}, async (rt) => {
    const env = await environmentOrFail(rt, opts.environment);
    const issues = await listCrashIssues(rt.db, String(env.id), { limit });
    const uploads = await crashUploadCounts(rt.db, String(env.id));
    emit(!!opts.json, { environment: env.appKey, issues, uploads }, () => {
      const lines = [`crash issues in ${env.appKey}, most recently seen first:`];
      if (issues.length === 0) lines.push('  none');
      else {
        lines.push(
          table(
            ['ISSUE', 'CRASHES', 'FIRST SEEN', 'LAST SEEN', 'VERSIONS', 'TITLE'],
            issues.map((i) => [`#${i.id}`, i.count, i.firstSeen, i.lastSeen, i.versions.map((v) => `${v.version} (${v.count})`).join(', '), i.title]),
          ),
        );
      }
      const poison = Object.entries(uploads.poison).map(([reason, n]) => `${reason} ${n}`);
      lines.push(`uploads: ${uploads.recorded} recorded, ${uploads.queued} queued, ${poison.length ? `poison: ${poison.join(', ')}` : 'none poison'}`);
      return lines.join('\n');
    });
  });
}

/** `hearth crashes show ID` (one crash) or `--issue ID` (one issue and its newest crashes). */
export async function runCrashesShow(id: string, opts: { environment: string; issue?: boolean; limit?: string; json?: boolean }): Promise<void> {
  const limit = limitOf(opts.limit, 20);
  await withRuntime({}, async (rt) => {
    const env = await environmentOrFail(rt, opts.environment);
    if (opts.issue) {
      const issue = await getCrashIssue(rt.db, String(env.id), id, { limit });
      if (!issue) throw new CliError(`no crash issue ${id} in ${env.appKey}`);
      emit(!!opts.json, { environment: env.appKey, issue }, () =>
        [
          `issue #${issue.id}: ${issue.title}`,
          `  ${issue.count} crash(es), first ${issue.firstSeen}, last ${issue.lastSeen}`,
          `  versions: ${issue.versions.map((v) => `${v.version} (${v.count}, last ${v.lastSeen})`).join(', ')}`,
          `  fingerprint ${issue.fingerprint} of:`,
          ...issue.frames.map((f) => `    ${f}`),
          'newest crashes:',
          ...issue.crashes.map((c) =>
            `  ${c.id}  ${c.receivedAt}  ${c.type}  ${c.buildVersion ?? c.engineVersion ?? ''}  ${c.platform ?? ''}  ${c.playerId ? `player ${c.playerId}` : ''}`.trimEnd(),
          ),
        ].join('\n'),
      );
      return;
    }
    const crash = await getCrash(rt.db, String(env.id), id);
    if (!crash) throw new CliError(`no crash ${id} in ${env.appKey}`);
    emit(!!opts.json, { environment: env.appKey, crash }, () => {
      const field = (name: string, value: string | null) => `  ${name.padEnd(20)}${value ?? '-'}`;
      return [
        `crash ${crash.id} (issue #${crash.issueId}, upload ${crash.uploadId})`,
        field('type', crash.type),
        field('crash GUID', crash.crashGuid),
        field('error message', crash.errorMessage),
        field('engine version', crash.engineVersion),
        field('build version', crash.buildVersion),
        field('configuration', crash.buildConfiguration),
        field('platform', crash.platform),
        field('game', crash.gameName),
        field('executable', crash.executableName),
        field('user id', crash.userId),
        field('user name', crash.userName),
        field('player', crash.playerId),
        field('crashed at', crash.crashedAt),
        field('received at', crash.receivedAt),
        'callstack:',
        ...(crash.callstack ?? '-').split('\n').map((l) => `    ${l}`),
        'files:',
        ...crash.files.map((f) => `  ${f.key}  ${f.kind}  ${f.sizeBytes} bytes`),
      ].join('\n');
    });
  });
}
