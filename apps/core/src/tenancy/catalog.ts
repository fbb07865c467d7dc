/**
 * Writing plans, projects and environments: one function per upsert (and per retirement, when a
 * Project or GameEnvironment document is deleted), called by the manifest
 * reconcilers (`hearth apply`, the operator). Each takes its database from the caller, runs in one
 * transaction (the caller's when there is one) and, when it changed something, announces
 * `environments` after the commit so every process drops its cached EnvironmentContexts.
 *
 * Refusals are Refusal errors whose `details.field` names the offending field of the spec (`plan`,
 * `appKey`) and whose message reads after that field's name (`names plan "gold", which does not exist`).
 */
import { sameJson } from '../canonical-json';
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { type Announcer, announceAfterCommit } from '../invalidation';
import type { PlanLimits, ProjectSpecT } from '../contract/resources';

/** What an upsert did; `unchanged` writes nothing and announces nothing. */
export type Upserted = 'created' | 'updated' | 'unchanged';

export async function upsertPlan(db: Queryable, bus: Announcer, name: string, spec: PlanLimits): Promise<Upserted> {
  return inTransaction(db, async (trx) => {
    const existing = await trx('plans').where({ name }).first();
    const live = existing && existing.retired_at === null;
    if (live && sameJson(existing.spec, spec)) return 'unchanged';
    // A retired plan (its document was deleted) comes back with the numbers applied now.
    await trx('plans').insert({ name, spec, retired_at: null, updated_at: trx.fn.now() }).onConflict('name').merge();
    await announceAfterCommit(trx, bus, { kind: 'environments' });
    return live ? 'updated' : 'created';
  });
}

/** A project's plan must exist, and its seats per session fit in the plan's. */
export async function upsertProject(db: Queryable, bus: Announcer, project: { namespace: string; name: string; spec: ProjectSpecT }): Promise<Upserted> {
  const { namespace, name, spec } = project;
  return inTransaction(db, async (trx) => {
    // FOR SHARE: a plan being retired meanwhile (retirePlan) is seen retired, or waits for this one.
    const plan = await trx('plans').where({ name: spec.plan }).forShare().first();
    if (!plan) throw refuse.missingReference('plan', `names plan "${spec.plan}", which does not exist`);
    if (plan.retired_at) throw refuse.missingReference('plan', `names plan "${spec.plan}", which was deleted (apply that Plan again to bring it back)`);
    const limits = plan.spec as PlanLimits;
    if (spec.sessionSeats > limits.sessionSeats) {
      throw refuse.overPlan('sessionSeats', `is ${spec.sessionSeats}, more than plan "${spec.plan}" allows (${limits.sessionSeats})`, limits.sessionSeats);
    }
    const existing = await trx('projects').where({ namespace, name }).first();
    const live = existing && existing.retired_at === null;
    if (live && existing.plan_name === spec.plan && sameJson(existing.spec, spec)) return 'unchanged';
    // A retired project (its document was deleted) comes back as it was: same id, its environments' rows.
    await trx('projects')
      .insert({ namespace, name, plan_name: spec.plan, spec, retired_at: null, updated_at: trx.fn.now() })
      .onConflict(['namespace', 'name'])
      .merge();
    await announceAfterCommit(trx, bus, { kind: 'environments' });
    return live ? 'updated' : 'created';
  });
}

/**
 * An environment belongs to a live project of its namespace; an app key names one environment of the
 * deployment, a retired one included (its players' tokens carry it). A retired environment applied
 * again comes back with its rows: players, saves, keys (`created`, as its document was).
 */
export async function upsertEnvironment(
  db: Queryable,
  bus: Announcer,
  environment: { namespace: string; name: string; project: string; appKey: string; allowedOrigins?: readonly string[] },
): Promise<Upserted> {
  const { namespace, name, appKey } = environment;
  const allowedOrigins = [...(environment.allowedOrigins ?? [])];
  return inTransaction(db, async (trx) => {
    // FOR SHARE: a project being retired meanwhile (retireProject) is seen retired, or waits for this one.
    const project = await trx('projects').where({ namespace, name: environment.project }).whereNull('retired_at').forShare().first();
    if (!project) {
      const retired = await trx('projects').where({ namespace, name: environment.project }).whereNotNull('retired_at').first('id');
      throw refuse.missingReference(
        'project',
        retired
          ? `names project "${environment.project}", which was retired (its Project was deleted; apply it again to bring it back)`
          : `names project "${environment.project}", which does not exist in namespace "${namespace}"`,
      );
    }
    // whereNot({ a, b }) would negate each column alone; this is "not this very environment".
    const taken = await trx('environments')
      .where({ app_key: appKey })
      .whereNot((q) => {
        q.where({ namespace, name });
      })
      .first();
    if (taken?.retired_at) {
      throw refuse.conflict(
        `"${appKey}" is the app key of retired GameEnvironment ${taken.namespace}/${taken.name}, kept for its players' data (apply that GameEnvironment again to bring it back)`,
        { field: 'appKey' },
      );
    }
    if (taken) throw refuse.conflict(`"${appKey}" is already the app key of GameEnvironment ${taken.namespace}/${taken.name}`, { field: 'appKey' });
    const existing = await trx('environments').where({ namespace, name }).first();
    const live = existing && existing.retired_at === null;
    const sameOrigins = existing && sameList(existing.allowed_origins as string[], allowedOrigins);
    if (live && Number(existing.project_id) === Number(project.id) && existing.app_key === appKey && sameOrigins) return 'unchanged';
    await trx('environments')
      .insert({ namespace, name, project_id: project.id, app_key: appKey, allowed_origins: allowedOrigins, retired_at: null, updated_at: trx.fn.now() })
      .onConflict(['namespace', 'name'])
      .merge(['project_id', 'app_key', 'allowed_origins', 'retired_at', 'updated_at']);
    await announceAfterCommit(trx, bus, { kind: 'environments' });
    return live ? 'updated' : 'created';
  });
}

/** A live environment's project (by name) and app key: what its document may not change (null: none live). */
export async function liveEnvironmentIdentity(
  db: Queryable,
  environment: { namespace: string; name: string },
): Promise<{ project: string; appKey: string } | null> {
  const row = await db('environments as e')
    .join('projects as p', 'p.id', 'e.project_id')
    .where({ 'e.namespace': environment.namespace, 'e.name': environment.name })
    .whereNull('e.retired_at')
    .first('p.name as project', 'e.app_key as appKey');
  return (row as { project: string; appKey: string } | undefined) ?? null;
}

/** What retiring did; `absent` when there was no live row of that name (a repeated delete). */
export type Retired = 'retired' | 'absent';

/**
 * A deleted GameEnvironment document retires its environment: from the commit on it resolves by no
 * app key, id or name, so sign-ins answer as for an unknown app key and its players' tokens and its
 * server keys are refused by every process at once (`environments` drops their cached contexts);
 * realtime processes close its sockets (`environment-retired`). Nothing else is touched: players,
 * saves, currencies, purchases, keys and content stay, the app key stays reserved, and applying the
 * document again (upsertEnvironment) brings it all back.
 */
export async function retireEnvironment(db: Queryable, bus: Announcer, environment: { namespace: string; name: string }): Promise<Retired> {
  return inTransaction(db, async (trx) => {
    const [row] = await trx('environments')
      .where(environment)
      .whereNull('retired_at')
      .update({ retired_at: trx.fn.now(), updated_at: trx.fn.now() })
      .returning('id');
    if (!row) return 'absent';
    await announceAfterCommit(trx, bus, { kind: 'environments' });
    await announceAfterCommit(trx, bus, { kind: 'environment-retired', environmentId: Number(row.id) });
    return 'retired';
  });
}

/** The names of the plans not retired, in order. */
export async function livePlanNames(db: Queryable): Promise<string[]> {
  return (await db('plans').whereNull('retired_at').orderBy('name').pluck('name')) as string[];
}

/**
 * A deleted Plan document retires its plan: from the commit on no project can be put on it (a Project
 * naming it is refused as naming a deleted plan), so what the cluster shows and what the database
 * holds agree. Refused (`conflict`) while live projects are on it: their environments' limits come
 * from it; move them to another plan, or delete them, first. The row stays for retired projects, and
 * applying the Plan again brings it back.
 */
export async function retirePlan(db: Queryable, bus: Announcer, name: string): Promise<Retired> {
  return inTransaction(db, async (trx) => {
    // FOR UPDATE: a project being put on it meanwhile (upsertProject) is counted, or refused.
    const row = await trx('plans').where({ name }).whereNull('retired_at').forUpdate().first();
    if (!row) return 'absent';
    const live = (await trx('projects').where({ plan_name: name }).whereNull('retired_at').orderBy(['namespace', 'name']).select('namespace', 'name')) as {
      namespace: string;
      name: string;
    }[];
    if (live.length > 0) {
      const names = live.map((p) => `${p.namespace}/${p.name}`);
      throw refuse.conflict(`Plan ${name} is still the plan of live projects (${names.join(', ')}): move them to another plan or delete them first`, {
        projects: names,
      });
    }
    await trx('plans').where({ name }).update({ retired_at: trx.fn.now(), updated_at: trx.fn.now() });
    await announceAfterCommit(trx, bus, { kind: 'environments' });
    return 'retired';
  });
}

/**
 * A deleted Project document retires its project, refused (`conflict`) while it has live
 * environments: one deleted file must not take a game down; its GameEnvironments are deleted first
 * (a namespace's deletion does both, the project once its environments are retired). Its rows stay,
 * and applying it again brings it back.
 */
export async function retireProject(db: Queryable, bus: Announcer, project: { namespace: string; name: string }): Promise<Retired> {
  return inTransaction(db, async (trx) => {
    // FOR UPDATE: an environment being put under it meanwhile (upsertEnvironment) is counted, or refused.
    const row = await trx('projects').where(project).whereNull('retired_at').forUpdate().first();
    if (!row) return 'absent';
    const live = await trx('environments').where({ project_id: row.id }).whereNull('retired_at').orderBy('name').pluck('name');
    if (live.length > 0) {
      throw refuse.conflict(
        `Project ${project.namespace}/${project.name} still has live environments (${live.join(', ')}): delete their GameEnvironments first`,
        { environments: live },
      );
    }
    await trx('projects').where({ id: row.id }).update({ retired_at: trx.fn.now(), updated_at: trx.fn.now() });
    await announceAfterCommit(trx, bus, { kind: 'environments' });
    return 'retired';
  });
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
