/**
 * Dashboard members: who may open a project's custom dashboard, in which environments, with which
 * permissions. Written by the DashboardMember reconciler (`hearth apply`, the operator); read at
 * sign-in and on every call of a dashboard token, so a member removed or disabled with kubectl is
 * refused on the next call.
 */
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { randomId } from '../ids';
import type { DashboardMemberSpecT, DashboardPermission } from '../contract/dashboards';

export interface MemberDocument {
  namespace: string;
  name: string;
  spec: DashboardMemberSpecT;
}

/** What the provider asserted about the person signing in. */
export interface AssertedPerson {
  subject: string;
  email?: string;
  emailVerified: boolean;
}

/** A member's standing in one environment. */
export interface MemberAccess {
  accountId: string;
  disabled: boolean;
  /** Empty when the member holds nothing in this environment. */
  permissions: DashboardPermission[];
}

/**
 * Makes the member's rows match its document, in one transaction. The project and each environment
 * are resolved in the document's namespace; an environment of another project is refused. The
 * account id is kept while the document lives, so tokens already issued stay the member's.
 */
export async function syncMember(db: Queryable, doc: MemberDocument): Promise<'created' | 'updated' | 'unchanged'> {
  const { namespace, name, spec } = doc;
  return inTransaction(db, async (trx) => {
    const project = await trx('projects').where({ namespace, name: spec.project }).whereNull('retired_at').first('id');
    if (!project) throw refuse.missingReference('project', `names project "${spec.project}", which does not exist in namespace "${namespace}"`);
    const access: { environment_id: number; permissions: DashboardPermission[] }[] = [];
    for (const [i, entry] of spec.environments.entries()) {
      const env = await trx('environments').where({ namespace, name: entry.environment }).whereNull('retired_at').first('id', 'project_id');
      if (!env)
        throw refuse.missingReference(
          `environments.${i}.environment`,
          `names environment "${entry.environment}", which does not exist in namespace "${namespace}"`,
        );
      if (Number(env.project_id) !== Number(project.id)) {
        throw refuse.invalid(`environments.${i}.environment`, `names environment "${entry.environment}", which is not of project "${spec.project}"`);
      }
      if (access.some((a) => a.environment_id === Number(env.id)))
        throw refuse.invalid(`environments.${i}.environment`, `names environment "${entry.environment}" twice`);
      access.push({ environment_id: Number(env.id), permissions: [...entry.permissions].sort() });
    }
    const row = { project_id: project.id, subject: spec.subject ?? null, email: spec.email ?? null, disabled: spec.disabled === true };
    const existing = await trx('dashboard_members').where({ manifest_namespace: namespace, manifest_name: name }).forUpdate().first();
    const id: string = existing?.id ?? randomId(22);
    if (existing) {
      const held = await trx('dashboard_member_access').where({ member_id: id }).orderBy('environment_id').select('environment_id', 'permissions');
      const same =
        Number(existing.project_id) === Number(project.id) &&
        existing.subject === row.subject &&
        existing.email === row.email &&
        existing.disabled === row.disabled &&
        JSON.stringify(held.map((h: { environment_id: string; permissions: string[] }) => [Number(h.environment_id), h.permissions])) ===
          JSON.stringify([...access].sort((a, b) => a.environment_id - b.environment_id).map((a) => [a.environment_id, a.permissions]));
      if (same) return 'unchanged';
      await trx('dashboard_members')
        .where({ id })
        .update({ ...row, updated_at: trx.fn.now() });
      await trx('dashboard_member_access').where({ member_id: id }).delete();
    } else {
      await trx('dashboard_members').insert({ id, manifest_namespace: namespace, manifest_name: name, ...row });
    }
    await trx('dashboard_member_access').insert(access.map((a) => ({ member_id: id, ...a })));
    return existing ? 'updated' : 'created';
  });
}

/** A deleted DashboardMember document: the account goes, and its tokens are refused from the commit on. */
export async function releaseMember(db: Queryable, ref: { namespace: string; name: string }): Promise<boolean> {
  const removed = await db('dashboard_members').where({ manifest_namespace: ref.namespace, manifest_name: ref.name }).delete();
  return removed > 0;
}

/**
 * The member a sign-in maps to in an environment's project: by subject first, else by an e-mail the
 * provider asserts as verified (compared without case). Null when the project knows nobody of that name.
 */
export async function memberFor(db: Queryable, projectId: number, environmentId: number, person: AssertedPerson): Promise<MemberAccess | null> {
  const bySubject = await accessWhere(db, projectId, environmentId, (q) => q.where('m.subject', person.subject));
  if (bySubject) return bySubject;
  if (!person.email || !person.emailVerified) return null;
  const email = person.email;
  return accessWhere(db, projectId, environmentId, (q) => q.whereRaw('lower(m.email) = lower(?)', [email]).whereNull('m.subject'));
}

/** A member's standing in an environment now, by account id; null when the member no longer exists. */
export async function accessOf(db: Queryable, accountId: string, environmentId: number): Promise<MemberAccess | null> {
  const row = await db('dashboard_members as m')
    .leftJoin('dashboard_member_access as a', (on) => {
      on.on('a.member_id', 'm.id').andOn('a.environment_id', db.raw('?', [environmentId]));
    })
    .where('m.id', accountId)
    .first('m.id', 'm.disabled', 'a.permissions');
  return row ? toAccess(row) : null;
}

async function accessWhere(db: Queryable, projectId: number, environmentId: number, who: (q: ReturnType<Queryable>) => unknown): Promise<MemberAccess | null> {
  const query = db('dashboard_members as m')
    .leftJoin('dashboard_member_access as a', (on) => {
      on.on('a.member_id', 'm.id').andOn('a.environment_id', db.raw('?', [environmentId]));
    })
    .where('m.project_id', projectId)
    .orderBy('m.id')
    .first('m.id', 'm.disabled', 'a.permissions');
  who(query);
  const row = await query;
  return row ? toAccess(row) : null;
}

function toAccess(row: { id: string; disabled: boolean; permissions: DashboardPermission[] | null }): MemberAccess {
  return { accountId: row.id, disabled: row.disabled, permissions: row.permissions ?? [] };
}
