/**
 * The metrics every Hearth process keeps the same way, defined once: Node's own (prom-client's
 * default metrics), the PostgreSQL pool and its queries, and Redis commands. The core does not depend
 * on prom-client (serving.ts's rule): each process passes its prom-client module and registry
 * (declared-metrics.ts).
 */
import type * as PromClient from 'prom-client';
import type { Db } from '../db/knex';
import type { Coordination } from '../coord/coordination';
import { declareMetrics, type PromClientModule } from './declared-metrics';
import { SeriesHistogram } from './series-metrics';
import { dependencies } from './serving';
import { observeQueries, poolUsage } from './telemetry';

/** Query and command durations: a fast primary answers in well under a millisecond, a stuck one in seconds. */
export const STORE_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export interface ProcessMetricsDeps {
  /** Node's own metrics (off where several processes share one Node process: `hearth dev`). */
  defaults?: boolean;
  db?: Db;
  coordination?: Coordination;
}

/**
 * Registers the process-wide metrics into `registry` and starts observing the pool and the
 * coordination; the answer stops observing (the pool gauge reads the pool when scraped).
 */
export function registerProcessMetrics(client: PromClientModule, registry: PromClient.Registry, deps: ProcessMetricsDeps): () => void {
  const stops: (() => void)[] = [];
  const declare = declareMetrics(client, registry);
  if (deps.defaults !== false) client.collectDefaultMetrics({ register: registry });
  const { db, coordination } = deps;
  if (db) {
    declare.gauge(
      'hearth_db_pool_connections',
      'PostgreSQL pool connections by state (used: lent to a query or transaction, free: idle, pending: acquires waiting for one)',
      ['state'],
      function collect() {
        const usage = poolUsage(db);
        this.set({ state: 'used' }, usage.used);
        this.set({ state: 'free' }, usage.free);
        this.set({ state: 'pending' }, usage.pending);
      },
    );
    const queries = declare.series(
      new SeriesHistogram(
        'hearth_db_query_duration_seconds',
        'PostgreSQL query duration by statement kind (its first keyword: select, insert, ..., other) and outcome (ok, error)',
        ['statement', 'outcome'],
        STORE_DURATION_BUCKETS,
      ),
    );
    stops.push(observeQueries(db, (statement, seconds, ok) => queries.series(statement, ok ? 'ok' : 'error').observe(seconds)));
  }
  if (db && coordination) {
    // Readiness does not follow the shared dependencies (serving.ts): their state is here, for alerts.
    declare.gauge(
      'hearth_dependency_up',
      '1 while the dependency (postgres, redis) answered this process at the last scrape, else 0',
      ['dependency'],
      async function collect() {
        const checks = await dependencies({ db, coordination });
        this.set({ dependency: 'postgres' }, checks.postgres ? 1 : 0);
        // An in-process coordination (the embedded default) is no dependency that can go away.
        if ('redis' in checks) this.set({ dependency: 'redis' }, checks.redis ? 1 : 0);
      },
    );
  }
  if (coordination?.observeCommands) {
    const commands = declare.series(
      new SeriesHistogram(
        'hearth_redis_command_duration_seconds',
        'Redis command duration by command name (evalsha: the rate-limit script) and outcome (ok, error)',
        ['command', 'outcome'],
        STORE_DURATION_BUCKETS,
      ),
    );
    stops.push(coordination.observeCommands((command, seconds, ok) => commands.series(command, ok ? 'ok' : 'error').observe(seconds)));
  }
  if (coordination?.observeConnections) {
    // Losses and recoveries apart: a loss not followed by a recovery is a Redis still unreachable.
    const lost = declare.counter(
      'hearth_redis_connections_lost_total',
      'Redis connections that were ready and closed, by connection (command: commands and rate limits, subscriber: pub/sub)',
      ['connection'],
    );
    const recovered = declare.counter(
      'hearth_redis_reconnects_total',
      'Redis connections ready again after a loss, reconnected by the process itself (the subscriber with its subscriptions), by connection',
      ['connection'],
    );
    stops.push(coordination.observeConnections((connection, event) => (event === 'lost' ? lost : recovered).inc({ connection })));
  }
  return () => stops.forEach((stop) => stop());
}
