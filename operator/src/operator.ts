/**
 * The operator process: leader election first; only the Lease's holder discovers the hearth.gg
 * resources and runs one controller per kind. Probes and metrics answer on every replica.
 */
import { InvalidationBus, type Logger } from '@hearth/core';
import type { Coordination } from '@hearth/core/coord';
import type { Db } from '@hearth/core/db';
import type { DocumentRef } from '@hearth/core/manifests';
import { closeServer, startMetricsServer } from '@hearth/core/process';
import type { OperatorConfig } from './config';
import { KindController } from './controller';
import { EventRecorder } from './events';
import { connectKube, describeError, discoverResources } from './kube';
import { LeaderElector } from './leader';
import { OperatorMetrics } from './metrics';
import { secretWatches } from './secret-watch';
import type { ResourceWatch } from './watch';

export interface OperatorDeps {
  config: OperatorConfig;
  db: Db;
  coordination: Coordination;
  logger: Logger;
  /** Called when this replica loses the Lease: reconciling has stopped; the caller exits (its pod restarts as a candidate). */
  onLostLease(): void;
  /** Where probes and metrics listen (METRICS_PORT on all interfaces by default). */
  metricsHost?: string;
}

export interface Operator {
  metricsUrl: string;
  identity: string;
  /** Stops reconciling, hands the Lease over, and closes what it opened (not the database or Redis: the caller's). */
  stop(): Promise<void>;
}

const DISCOVERY_RETRY_MS = 5_000;

export async function startOperator(deps: OperatorDeps): Promise<Operator> {
  const { config, logger } = deps;
  const kube = await connectKube(config.kubeconfig);
  const metrics = new OperatorMetrics(true, { db: deps.db, coordination: deps.coordination });
  // Announcements reach every API and realtime process (the bus `hearth apply` announces on).
  const bus = new InvalidationBus(deps.coordination, (err) =>
    logger.warn({ err: err.message }, 'could not announce a change; processes catch up when their caches expire'),
  );
  const events = new EventRecorder(kube, config.identity, logger);
  let controllers: KindController[] = [];
  let secrets: ResourceWatch[] = [];
  let stopping = false;
  let discoveryTimer: NodeJS.Timeout | undefined;

  const startControllers = async (): Promise<void> => {
    if (stopping || !elector.isLeader) return;
    let types;
    try {
      types = await discoverResources(kube);
    } catch (err) {
      logger.error({ err: describeError(err) }, 'cannot reconcile yet; trying again');
      discoveryTimer = setTimeout(() => void startControllers(), DISCOVERY_RETRY_MS);
      return;
    }
    if (stopping || !elector.isLeader) return;
    // A change reaches the objects naming what changed (an environment retired: its keys and content) and every refused one.
    const retryAfter = (changed: DocumentRef) => {
      for (const c of controllers) {
        c.retryReferencing(changed);
        c.retryRefused();
      }
    };
    controllers = types.map(
      (type) =>
        new KindController(type, {
          kube,
          db: deps.db,
          bus,
          events,
          metrics,
          logger,
          watchNamespaces: config.watchNamespaces,
          relistIntervalMs: config.relistIntervalMs,
          concurrency: config.concurrency,
          retry: { baseDelayMs: 500, maxDelayMs: 60_000 },
          referenceGraceMs: config.referenceGraceMs,
          // Namespaced kinds are always this release's; a cluster-scoped one (Plan) only when it owns them.
          owner: type.namespaced || config.planOwner,
          fieldManager: config.fieldManager,
          onChange: retryAfter,
        }),
    );
    // The Secrets it writes and the Secrets opted in for a Project: a change reconciles their owner at once.
    const byKind = new Map(controllers.map((c) => [c.type.kind, c]));
    secrets = secretWatches(kube, {
      namespaces: config.watchNamespaces,
      relistIntervalMs: config.relistIntervalMs,
      logger,
      onOwner: (kind, key) => byKind.get(kind)?.queue.add(key),
      onRestart: (reason) => metrics.watchRestarts.inc({ kind: 'Secret', reason }),
    });
    for (const c of controllers) c.start();
    for (const w of secrets) w.start();
    logger.info(
      {
        kinds: types.map((t) => t.kind),
        namespaces: config.watchNamespaces ?? '(all)',
        plans: config.planOwner ? 'owner' : 'follower',
        fieldManager: config.fieldManager,
      },
      'reconciling',
    );
  };

  const stopControllers = async (): Promise<void> => {
    if (discoveryTimer) clearTimeout(discoveryTimer);
    const running = controllers;
    const watching = secrets;
    controllers = [];
    secrets = [];
    await Promise.all([...watching.map((w) => w.stop()), ...running.map((c) => c.stop())]);
  };

  const elector = new LeaderElector(
    kube,
    {
      namespace: config.leaseNamespace,
      name: config.leaseName,
      identity: config.identity,
      leaseDurationSeconds: config.leaseDurationSeconds,
      renewDeadlineMs: config.renewDeadlineMs,
      retryPeriodMs: config.retryPeriodMs,
    },
    {
      onStartedLeading: () => {
        metrics.leader.set(1);
        void startControllers();
      },
      onStoppedLeading: () => {
        metrics.leader.set(0);
        metrics.notReady.clear();
        metrics.terminating.clear();
        // No new work from here on; the caller exits, which ends the work in flight (its transaction rolls back).
        for (const w of secrets) void w.stop();
        for (const c of controllers) void c.stop();
        deps.onLostLease();
      },
    },
    logger,
  );

  const readyWithinMs = Math.max(10_000, config.retryPeriodMs * 3);
  // /metrics, /healthz, and /readyz: ready while it reached the API server within the last few lease rounds, leader or standby.
  const probes = await startMetricsServer(metrics.registry, config.base.metricsPort, deps.metricsHost ?? '0.0.0.0', {
    readiness: () =>
      Date.now() - elector.lastContact < readyWithinMs
        ? { ready: true, leader: elector.isLeader }
        : { ready: false, reason: 'the Kubernetes API server has not answered recently' },
  });
  elector.start();
  logger.info({ identity: config.identity, lease: `${config.leaseNamespace}/${config.leaseName}`, metrics: probes.url }, 'operator started');

  return {
    metricsUrl: probes.url,
    identity: config.identity,
    stop: async () => {
      stopping = true;
      await stopControllers();
      await elector.release();
      metrics.leader.set(0);
      await closeServer(probes.server, { dropAll: true });
      metrics.stopProcessMetrics();
    },
  };
}
