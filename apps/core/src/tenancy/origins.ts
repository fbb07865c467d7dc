/**
 * The web pages that may call the API from a browser (docs/api-conventions.md "Browsers (CORS)").
 *
 * - An environment's own: its game's pages (GameEnvironment `spec.cors.allowedOrigins`) and its
 *   project's dashboard's (the origin of `spec.dashboard.redirectUri` and `spec.dashboard.allowedOrigins`).
 *   They ride on the cached EnvironmentContext, so a request that knows its environment (by its
 *   credential, or the app key its body or path names) checks its Origin against them with no read.
 * - The deployment's (`OriginDirectory`): every origin any environment of an approved project allows,
 *   held in memory and reloaded in the background when an `environments` change is announced (and every
 *   10 s). A preflight carries no credential, so it is answered from this set without touching the
 *   database, as is an answer whose environment is not known (a refused credential).
 */
import type { Db } from '../db/knex';
import type { InvalidationBus } from '../invalidation';
import type { Logger } from '../logger';
import type { DashboardSettings } from '../contract/dashboards';
import { originOf } from '../contract/origins';

/** Which pages a route serves: a game's (player, server and game sign-in routes) or a dashboard's. */
export type PageKind = 'game' | 'dashboard';

export interface BrowserOrigins {
  game: ReadonlySet<string>;
  dashboard: ReadonlySet<string>;
}

export const NO_ORIGINS: BrowserOrigins = { game: new Set(), dashboard: new Set() };

/** A project's dashboard's origins: its redirect URI's (the page that finishes the sign-in) and the ones it adds. */
export function dashboardOriginsOf(dashboard: DashboardSettings | null): string[] {
  if (!dashboard) return [];
  const own = originOf(dashboard.redirectUri);
  return [...(own ? [own] : []), ...(dashboard.allowedOrigins ?? [])];
}

export function browserOriginsOf(gameOrigins: readonly string[], dashboard: DashboardSettings | null): BrowserOrigins {
  if (gameOrigins.length === 0 && dashboard === null) return NO_ORIGINS;
  return { game: new Set(gameOrigins), dashboard: new Set(dashboardOriginsOf(dashboard)) };
}

/** Whether `origin` may read answers of routes serving `kinds` under `origins`. */
export function allowsOrigin(origins: BrowserOrigins, origin: string, kinds: readonly PageKind[]): boolean {
  for (const kind of kinds) if (origins[kind].has(origin)) return true;
  return false;
}

/** How often the deployment's origins are read again when no change was announced (a lost message). */
const REFRESH_MS = 10_000;

/**
 * Every origin the deployment allows, by kind of page, for the requests that do not know their
 * environment: preflights and answers refused before their environment was known. Only projects under
 * review state `approved` count: a page of a project awaiting review, rejected or suspended gets no
 * preflight, as every request of its environment is refused `project-not-approved`.
 */
export class OriginDirectory {
  private current: BrowserOrigins = NO_ORIGINS;
  private loading: Promise<void> | null = null;
  /** A change was announced while a load ran (which may have read before it): load once more. */
  private again = false;
  private timer?: NodeJS.Timeout;
  private stopListening?: () => void;

  constructor(
    private readonly pool: Db,
    private readonly bus: InvalidationBus,
    private readonly logger: Logger,
  ) {}

  /** Loads the set (a process starts with it), then follows announcements and refreshes now and then. */
  async start(): Promise<void> {
    this.stopListening = this.bus.on((event) => {
      if (event.kind === 'environments') this.reload();
    });
    await this.load();
    this.timer = setInterval(() => this.reload(), REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.stopListening?.();
  }

  /** The deployment's origins as last loaded: read without waiting. */
  get origins(): BrowserOrigins {
    return this.current;
  }

  /** Reads the set again in the background; a failure keeps the set as it was (logged). */
  reload(): void {
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = this.load()
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'could not read the allowed browser origins; keeping the ones held'))
      .finally(() => {
        this.loading = null;
        if (this.again) {
          this.again = false;
          this.reload();
        }
      });
  }

  /** Waits for a load under way (tests: after an apply, the set the announcement asked for). */
  async settled(): Promise<void> {
    while (this.loading) await this.loading;
  }

  private async load(): Promise<void> {
    const rows = (await this.pool('environments as e')
      .join('projects as p', 'p.id', 'e.project_id')
      .whereNull('e.retired_at')
      .whereNull('p.retired_at')
      .whereRaw(`p.spec->>'review' = 'approved'`)
      .select('e.allowed_origins', this.pool.raw(`p.spec->'dashboard' as dashboard`))) as { allowed_origins: string[]; dashboard: DashboardSettings | null }[];
    const game = new Set<string>();
    const dashboard = new Set<string>();
    for (const row of rows) {
      for (const origin of row.allowed_origins) game.add(origin);
      if (row.dashboard && row.dashboard.enabled !== false) for (const origin of dashboardOriginsOf(row.dashboard)) dashboard.add(origin);
    }
    this.current = { game, dashboard };
  }
}
