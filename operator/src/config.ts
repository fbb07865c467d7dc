/**
 * The operator's own settings, read once at start with the same strictness as the core's loader
 * (apps/core/src/config.ts): a malformed variable stops the process with a ConfigError naming it.
 * The database, Redis, METRICS_PORT and LOG_LEVEL come from loadConfig itself.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { ConfigError, type LoadedConfig, loadConfig } from '@hearth/core';

type Env = Record<string, string | undefined>;

export interface OperatorConfig {
  base: LoadedConfig<{ database: true; redis: true }>;
  /** KUBECONFIG when set, else the in-cluster ServiceAccount (client-node's loadFromDefault order). */
  kubeconfig?: string;
  /** The Lease two replicas compete for (coordination.k8s.io/v1). */
  leaseName: string;
  leaseNamespace: string;
  /** This replica's name in the Lease: the pod's name (POD_NAME, from the downward API) or the host name, and a random part (a restarted process is a new holder). */
  identity: string;
  leaseDurationSeconds: number;
  /** A leader that could not renew for this long stops reconciling (and exits) before another may take over. */
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Only these namespaces' resources (Plan is cluster-scoped and always watched); unset: every namespace. */
  watchNamespaces?: string[];
  /** Every this often the watches start over with a fresh list, so the state, not single events, drives reconciles. */
  relistIntervalMs: number;
  /** Objects of one kind reconciled at once (one object is never reconciled twice at once). */
  concurrency: number;
  /** A reference to a missing document is waited for this long before it is reported (Ready=False, a Warning Event). */
  referenceGraceMs: number;
  /**
   * Whether this operator owns the cluster-scoped resources (Plans): writes their status and adds and
   * takes off their finalizer. Every release of a cluster sees the same Plans, each reconciles them
   * into its own database, and exactly one owns them; the others only follow them (a deleted Plan
   * retired from their database all the same). True unless HEARTH_OPERATOR_PLAN_OWNER=false.
   */
  planOwner: boolean;
  /** The name its writes to hearth.gg objects carry in their managedFields: which release's operator wrote what. */
  fieldManager: string;
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function name(env: Env, variable: string, fallback?: string): string | undefined {
  const raw = env[variable];
  if (raw === undefined || raw === '') return fallback;
  if (raw.length > 253 || !NAME.test(raw)) throw new ConfigError(variable, `must be a Kubernetes name (lower-case letters, digits, "-" and "."), got "${raw}"`);
  return raw;
}

/** A comma-separated list of names (the chart's Roles are in exactly these namespaces); unset or empty: undefined. */
function names(env: Env, variable: string): string[] | undefined {
  const raw = env[variable];
  if (raw === undefined || raw.trim() === '') return undefined;
  const list = [...new Set(raw.split(',').map((n) => n.trim()))];
  for (const n of list) {
    if (n === '') throw new ConfigError(variable, `must be namespace names separated by commas, got "${raw}"`);
    name({ [variable]: n }, variable, undefined);
  }
  return list;
}

function flag(env: Env, variable: string, fallback: boolean): boolean {
  const raw = env[variable];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new ConfigError(variable, `must be true or false, got "${raw}"`);
}

function integer(env: Env, variable: string, fallback: number, min: number, max: number): number {
  const raw = env[variable];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(variable, `must be a whole number ${min}-${max}, got "${raw}"`);
  return n;
}

/** The namespace the pod runs in (the ServiceAccount's mounted file), when in a cluster. */
function podNamespace(): string | undefined {
  try {
    return fs.readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export function loadOperatorConfig(env: Env = process.env): OperatorConfig {
  // REDIS_URL is required: without the bus, API processes would only see changes when their caches expire.
  const base = loadConfig(env, { database: true, redis: true });
  const leaseDurationSeconds = integer(env, 'HEARTH_OPERATOR_LEASE_DURATION_SECONDS', 15, 2, 300);
  const renewDeadlineMs = Math.round(leaseDurationSeconds * 1000 * (2 / 3));
  const retryPeriodMs = integer(env, 'HEARTH_OPERATOR_LEASE_RETRY_MS', Math.min(2000, Math.round((leaseDurationSeconds * 1000) / 5)), 100, 60_000);
  if (retryPeriodMs >= renewDeadlineMs) {
    throw new ConfigError('HEARTH_OPERATOR_LEASE_RETRY_MS', `must be below two thirds of the lease duration (${renewDeadlineMs} ms)`);
  }
  const identity = env.POD_NAME || os.hostname();
  const leaseName = name(env, 'HEARTH_OPERATOR_LEASE_NAME') ?? 'hearth-operator';
  const leaseNamespace = name(env, 'HEARTH_OPERATOR_LEASE_NAMESPACE') ?? podNamespace() ?? 'default';
  return {
    base,
    kubeconfig: env.KUBECONFIG || undefined,
    leaseName,
    leaseNamespace,
    identity: `${identity}_${randomBytes(4).toString('hex')}`,
    leaseDurationSeconds,
    renewDeadlineMs,
    retryPeriodMs,
    watchNamespaces: names(env, 'HEARTH_OPERATOR_WATCH_NAMESPACE'),
    relistIntervalMs: integer(env, 'HEARTH_OPERATOR_RELIST_SECONDS', 300, 5, 86_400) * 1000,
    concurrency: integer(env, 'HEARTH_OPERATOR_CONCURRENCY', 2, 1, 64),
    referenceGraceMs: integer(env, 'HEARTH_OPERATOR_REFERENCE_GRACE_SECONDS', 5, 0, 300) * 1000,
    planOwner: flag(env, 'HEARTH_OPERATOR_PLAN_OWNER', true),
    // One name for the release's replicas (its Lease names the release), within the API server's 128 characters.
    fieldManager: `hearth-operator/${leaseNamespace}/${leaseName}`.slice(0, 128),
  };
}
