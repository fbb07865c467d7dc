import type { Queryable } from '../db/knex';
import type { PlanLimits, ProjectSpecT, ServiceName } from '../contract/resources';
import { SERVICES } from '../contract/resources';
import type { DashboardSettings } from '../contract/dashboards';
import { type BrowserOrigins, browserOriginsOf } from './origins';

export type ReviewState = ProjectSpecT['review'];

/** Everything a request needs to know about the environment it acts in; cached per process. */
export interface EnvironmentContext {
  id: number;
  appKey: string;
  namespace: string;
  name: string;
  project: { id: number; name: string; review: ReviewState; sessionSeats: number };
  services: Record<ServiceName, boolean>;
  plan: PlanLimits & { name: string };
  identityProvider: ProjectSpecT['identityProvider'] | null;
  /** The store it sells through (commerce), null when none is set. */
  store: ProjectSpecT['store'] | null;
  wordFilter: string[];
  /** Who unlocks skill nodes: `game` for a game of the service's own, where a player's token may not (docs/progression.md). */
  skillNodesUnlockedBy: 'players' | 'game';
  /** The project's custom-dashboard provider; null when it has no dashboard (switched off included). */
  dashboard: DashboardSettings | null;
  /** The web pages that may call it from a browser: its game's, and its project's dashboard's (tenancy/origins.ts). */
  origins: BrowserOrigins;
}

interface Row {
  id: string;
  app_key: string;
  namespace: string;
  name: string;
  project_id: string;
  project_name: string;
  project_spec: ProjectSpecT;
  plan_name: string;
  plan_spec: PlanLimits;
  allowed_origins: string[];
}

function toContext(row: Row): EnvironmentContext {
  const spec = row.project_spec;
  const services = Object.fromEntries(SERVICES.map((s) => [s, spec.services?.[s] === true])) as Record<ServiceName, boolean>;
  const dashboard = spec.dashboard && spec.dashboard.enabled !== false ? spec.dashboard : null;
  return {
    id: Number(row.id),
    appKey: row.app_key,
    namespace: row.namespace,
    name: row.name,
    project: {
      id: Number(row.project_id),
      name: row.project_name,
      review: spec.review,
      // Held to the plan: a plan lowered after the project was applied still caps it.
      sessionSeats: Math.min(spec.sessionSeats, row.plan_spec.sessionSeats),
    },
    services,
    plan: { ...row.plan_spec, name: row.plan_name },
    identityProvider: spec.identityProvider ?? null,
    store: spec.store ?? null,
    wordFilter: spec.wordFilter?.words ?? [],
    skillNodesUnlockedBy: spec.progression?.skillNodesUnlockedBy ?? 'players',
    dashboard,
    origins: browserOriginsOf(row.allowed_origins, dashboard),
  };
}

/**
 * Live environments only: a retired one (its GameEnvironment was deleted) is found by no app key, id
 * or name, so every credential of it is refused and manifests cannot point at it. (A live
 * environment's project is live: retireProject waits for its environments.)
 */
function baseQuery(db: Queryable) {
  return db('environments as e')
    .whereNull('e.retired_at')
    .join('projects as p', 'p.id', 'e.project_id')
    .join('plans as pl', 'pl.name', 'p.plan_name')
    .select(
      'e.id',
      'e.app_key',
      'e.namespace',
      'e.name',
      'e.allowed_origins',
      'p.id as project_id',
      'p.name as project_name',
      'p.spec as project_spec',
      'pl.name as plan_name',
      'pl.spec as plan_spec',
    );
}

export async function loadEnvironmentById(db: Queryable, id: number): Promise<EnvironmentContext | null> {
  const row = (await baseQuery(db).where('e.id', id).first()) as Row | undefined;
  return row ? toContext(row) : null;
}

export async function loadEnvironmentByAppKey(db: Queryable, appKey: string): Promise<EnvironmentContext | null> {
  const row = (await baseQuery(db).where('e.app_key', appKey).first()) as Row | undefined;
  return row ? toContext(row) : null;
}

/** By the name a GameEnvironment document gave it in its namespace (what manifests point at). */
export async function loadEnvironmentByName(db: Queryable, namespace: string, name: string): Promise<EnvironmentContext | null> {
  const row = (await baseQuery(db).where({ 'e.namespace': namespace, 'e.name': name }).first()) as Row | undefined;
  return row ? toContext(row) : null;
}

/** Whether the environment of that name is retired (its GameEnvironment was deleted; its rows kept). */
export async function isEnvironmentRetired(db: Queryable, environment: { namespace: string; name: string }): Promise<boolean> {
  return (await db('environments').where(environment).whereNotNull('retired_at').first('id')) !== undefined;
}
