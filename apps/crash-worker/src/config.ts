/**
 * The crash worker's own settings (docs/crashes.md, "The worker"), read once at start with the
 * core loader's strictness: a malformed variable stops the process with a ConfigError naming it.
 */
import { ConfigError, type LoadedConfig, loadConfig } from '@hearth/core';
import { DEFAULT_STORE_REPORT_SETTINGS, type StoreReportSettings } from '@hearth/core/commerce';
import { DEFAULT_MAX_INFLATED_BYTES } from './archive';

type Env = Record<string, string | undefined>;

export interface CrashWorkerSettings {
  /** Jobs worked at once by this process (CRASH_WORKER_CONCURRENCY, default 2). */
  concurrency: number;
  /** The inflate cap (CRASH_MAX_INFLATED_BYTES, default 128 MiB): past it an upload is poison. */
  maxInflatedBytes: number;
  /** How often pg-boss's maintenance (expired jobs back to retry) runs (CRASH_QUEUE_MAINTENANCE_SECONDS, default 60). */
  maintenanceIntervalSeconds: number;
  /** How often an idle worker asks for a job (CRASH_WORKER_POLL_SECONDS, default 2). */
  pollingIntervalSeconds: number;
  /** Test only (HEARTH_CRASH_WORKER_TEST_HOLD_MS): wait this long after storing files, before recording. */
  testHoldMs: number;
}

export interface CrashWorkerConfig {
  base: LoadedConfig<{ database: true }>;
  settings: CrashWorkerSettings;
  /** The commerce report job's settings; null when COMMERCE_REPORT_INTERVAL_SECONDS is 0 (switched off). */
  storeReport: StoreReportSettings | null;
}

function number(env: Env, variable: string, fallback: number, min: number, max: number, integer = true): number {
  const raw = env[variable];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    throw new ConfigError(variable, `must be a ${integer ? 'whole ' : ''}number ${min}-${max}, got "${raw}"`);
  }
  return n;
}

export function loadCrashWorkerSettings(env: Env = process.env): CrashWorkerSettings {
  return {
    concurrency: number(env, 'CRASH_WORKER_CONCURRENCY', 2, 1, 64),
    maxInflatedBytes: number(env, 'CRASH_MAX_INFLATED_BYTES', DEFAULT_MAX_INFLATED_BYTES, 1024 * 1024, 2 * 1024 * 1024 * 1024),
    maintenanceIntervalSeconds: number(env, 'CRASH_QUEUE_MAINTENANCE_SECONDS', 60, 1, 3600),
    pollingIntervalSeconds: number(env, 'CRASH_WORKER_POLL_SECONDS', 2, 0.5, 60, false),
    testHoldMs: number(env, 'HEARTH_CRASH_WORKER_TEST_HOLD_MS', 0, 0, 600_000),
  };
}

/** The background reconciliation of commerce (docs/commerce.md "Background reconciliation"); null when switched off (interval 0). */
export function loadStoreReportSettings(env: Env = process.env): StoreReportSettings | null {
  const d = DEFAULT_STORE_REPORT_SETTINGS;
  const intervalSeconds = number(env, 'COMMERCE_REPORT_INTERVAL_SECONDS', d.intervalSeconds, 0, 86_400, false);
  if (intervalSeconds === 0) return null;
  return {
    intervalSeconds,
    maxResults: number(env, 'COMMERCE_REPORT_MAX_RESULTS', d.maxResults, 1, 1000),
    openOrdersPerTick: number(env, 'COMMERCE_REPORT_OPEN_ORDERS', d.openOrdersPerTick, 1, 1000),
    recheckSeconds: number(env, 'COMMERCE_REPORT_RECHECK_SECONDS', d.recheckSeconds, 0, 86_400),
    abandonedAfterSeconds: number(env, 'COMMERCE_ABANDONED_ORDER_SECONDS', d.abandonedAfterSeconds, 60, 30 * 86_400),
  };
}

export function loadCrashWorkerConfig(env: Env = process.env): CrashWorkerConfig {
  return { base: loadConfig(env, { database: true }), settings: loadCrashWorkerSettings(env), storeReport: loadStoreReportSettings(env) };
}
