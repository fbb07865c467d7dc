import type { Db } from '../db/knex';
import { SingleFlight, TtlCache } from '../cache';
import { type Clock, systemClock } from '../clock';
import type { InvalidationBus } from '../invalidation';
import { type EnvironmentContext, loadEnvironmentByAppKey, loadEnvironmentById } from './environments';

/** Environments with their project and plan, cached per process; a reconcile announces changes. */
export class EnvironmentRegistry {
  private readonly byIdCache: TtlCache<number, EnvironmentContext | null>;
  private readonly byAppKeyCache: TtlCache<string, EnvironmentContext | null>;
  private flight = new SingleFlight<string, EnvironmentContext | null>();
  /**
   * Moves on at every `environments` announcement: a load that began before it may have read the old
   * rows (a just-retired environment), so it answers its callers but is not remembered, and callers
   * after the announcement start a load of their own.
   */
  private generation = 0;

  /**
   * `pool` loads the cache every request of the process reads (the hot path waits for nothing once an
   * environment is there), so it holds committed data only, never what a caller's transaction sees.
   */
  constructor(
    private readonly pool: Db,
    bus: InvalidationBus,
    clock: Clock = systemClock,
  ) {
    this.byIdCache = new TtlCache(10_000, undefined, clock);
    this.byAppKeyCache = new TtlCache(10_000, undefined, clock);
    bus.on((event) => {
      if (event.kind === 'environments') {
        this.generation++;
        this.byIdCache.clear();
        this.byAppKeyCache.clear();
      }
    });
  }

  byId(id: number): Promise<EnvironmentContext | null> {
    return this.cachedOrLoaded(this.byIdCache.get(id), `id:${id}`, () => loadEnvironmentById(this.pool, id), { id });
  }

  /** What `byAppKey` answers when it is cached, without waiting; undefined when it is not. */
  peekByAppKey(appKey: string): EnvironmentContext | null | undefined {
    return this.byAppKeyCache.get(appKey);
  }

  byAppKey(appKey: string): Promise<EnvironmentContext | null> {
    return this.cachedOrLoaded(this.byAppKeyCache.get(appKey), `key:${appKey}`, () => loadEnvironmentByAppKey(this.pool, appKey), { appKey });
  }

  /**
   * The cached answer, or else one load per `ask` at a time (concurrent askers share it), remembered
   * unless the caches were dropped while it loaded (its answer may predate the change).
   */
  private async cachedOrLoaded(
    hit: EnvironmentContext | null | undefined,
    ask: string,
    load: () => Promise<EnvironmentContext | null>,
    asked: { id?: number; appKey?: string },
  ): Promise<EnvironmentContext | null> {
    if (hit !== undefined) return hit;
    const generation = this.generation;
    return this.flight.run(`${generation}:${ask}`, async () => {
      const env = await load();
      if (generation === this.generation) this.remember(env, asked);
      return env;
    });
  }

  private remember(env: EnvironmentContext | null, asked: { id?: number; appKey?: string }): void {
    if (env) {
      this.byIdCache.set(env.id, env);
      this.byAppKeyCache.set(env.appKey, env);
    } else {
      if (asked.id !== undefined) this.byIdCache.set(asked.id, null, 2_000);
      if (asked.appKey !== undefined) this.byAppKeyCache.set(asked.appKey, null, 2_000);
    }
  }
}
