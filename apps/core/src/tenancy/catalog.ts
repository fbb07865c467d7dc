/**
 * Writing plans, projects and environments: one function per upsert, called by the manifest
 * reconcilers (`hearth apply`, the operator). Each takes its database from the caller, runs in one
 * transaction (the caller's when there is one) and, when it changed something, announces
 * `environments` after the commit so every process drops its cached EnvironmentContexts.
 *
 * Refusals are ApiErrors whose `details.field` names the offending field of the spec (`plan`,
 * `appKey`) and whose message reads after that field's name (`names plan "gold", which does not exist`).
 */
import { sameJson } from '../canonical-json';
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { Announcer, announceAfterCommit } from '../invalidation';
import type { PlanLimits, ProjectSpecT } from '../manifests/schemas';

/** What an upsert did; `unchanged` writes nothing and announces nothing. */
export type Upserted = 'created' | 'updated' | 'unchanged';

export async function upsertPlan(db: Queryable, bus: Announcer, name: string, spec: PlanLimits): Promise<Upserted> {
  return inTransaction(db, async (trx) => {
    const existing = await trx('plans').where({ name }).first();
    if (existing && sameJson(existing.spec, spec)) return 'unchanged';
    await trx('plans').insert({ name, spec, updated_at: trx.fn.now() }).onConflict('name').merge();
    await announceAfterCommit(trx, bus, { kind: 'environments' });
    return existing ? 'updated' : 'created';
  });
}

/** A project's plan must exist, and its seats per session fit in the plan's. */
export async function upsertProject(
  db: Queryable,
  bus: Announcer,
  project: { namespace: string; name: string; spec: ProjectSpecT },
): Promise<Upserted> {
  const { namespace, name, spec } = project;
  return inTransaction(db, async (trx) => {
    const plan = await trx('plans').where({ name: spec.plan }).first();
    if (!plan) throw refuse.invalid('plan', `names plan "${spec.plan}", which does not exist`);
    const limits = plan.spec as PlanLimits;
    if (spec.sessionSeats > limits.sessionSeats) {
      throw refuse.invalid('sessionSeats', `is ${spec.sessionSeats}, more than plan "${spec.plan}" allows (${limits.sessionSeats})`);
    }
    const existing = await trx('projects').where({ namespace, name }).first();
    if (existing && existing.plan_name === spec.plan && sameJson(existing.spec, spec)) return 'unchanged';
    await trx('projects')
      .insert({ namespace, name, plan_name: spec.plan, spec, updated_at: trx.fn.now() })
      .onConflict(['namespace', 'name'])
      .merge();
    await announceAfterCommit(trx, bus, { kind: 'environments' });
    return existing ? 'updated' : 'created';
  });
}

/** An environment belongs to a project of its namespace; an app key names one environment of the deployment. */
export async function upsertEnvironment(
  db: Queryable,
  bus: Announcer,
  environment: { namespace: string; name: string; project: string; appKey: string },
): Promise<Upserted> {
  const { namespace, name, appKey } = environment;
  return inTransaction(db, async (trx) => {
    const project = await trx('projects').where({ namespace, name: environment.project }).first();
    if (!project) throw refuse.invalid('project', `names project "${environment.project}", which does not exist in namespace "${namespace}"`);
    // whereNot({ a, b }) would negate each column alone; this is "not this very environment".
    const taken = await trx('environments')
      .where({ app_key: appKey })
      .whereNot((q) => q.where({ namespace, name }))
      .first();
    if (taken) throw refuse.conflict(`"${appKey}" is already the app key of GameEnvironment ${taken.namespace}/${taken.name}`, { field: 'appKey' });
    const existing = await trx('environments').where({ namespace, name }).first();
    if (existing && Number(existing.project_id) === Number(project.id) && existing.app_key === appKey) return 'unchanged';
    await trx('environments')
      .insert({ namespace, name, project_id: project.id, app_key: appKey, updated_at: trx.fn.now() })
      .onConflict(['namespace', 'name'])
      .merge(['project_id', 'app_key', 'updated_at']);
    await announceAfterCommit(trx, bus, { kind: 'environments' });
    return existing ? 'updated' : 'created';
  });
}
