/**
 * The commerce report job in the worker fleet (docs/commerce.md "Background reconciliation"): every
 * `hearth crash-worker` (and `hearth dev`) runs it; a per-project advisory lock lets one runner at a
 * time work a project. Its metrics are registered on the worker's registry (metrics.ts).
 */
import type { Clock, Logger } from '@hearth/core';
import { type CommerceService, type StoreReportJob, type StoreReportSettings, storeReportJob } from '@hearth/core/commerce';
import type { Db } from '@hearth/core/db';
import type { CrashWorkerMetrics } from './metrics';

export function startStoreReport(deps: {
  db: Db;
  logger: Logger;
  settings: StoreReportSettings;
  metrics: CrashWorkerMetrics;
  commerce: CommerceService;
  clock: Clock;
}): StoreReportJob {
  const logger = deps.logger.child({ component: 'commerce-report' });
  const job = storeReportJob({ db: deps.db, logger, settings: deps.settings, observer: deps.metrics.storeReport, commerce: deps.commerce, clock: deps.clock });
  job.start();
  logger.info({ intervalSeconds: deps.settings.intervalSeconds }, 'commerce report job started');
  return job;
}
