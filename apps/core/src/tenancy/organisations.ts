import type { Queryable } from '../db/knex';

/**
 * An organisation: who holds a licence for client plugins. Hearth's tenancy has no level above the
 * project (a project is its owner's namespace, plan and review), so the organisation is the project:
 * its plan gives the licence's seats, and its licence keys are its credentials (docs/licence.md).
 */
export interface Organisation {
  /** The project's id. */
  id: number;
  namespace: string;
  name: string;
}

/** A live (not retired) project as an organisation, or null. */
export async function organisationById(db: Queryable, projectId: number): Promise<Organisation | null> {
  const row = await db('projects').where({ id: projectId }).whereNull('retired_at').first('id', 'namespace', 'name');
  return row ? { id: Number(row.id), namespace: row.namespace as string, name: row.name as string } : null;
}

/** A live project by the name a document gives it in its namespace, or null. */
export async function organisationNamed(db: Queryable, namespace: string, name: string): Promise<Organisation | null> {
  const row = await db('projects').where({ namespace, name }).whereNull('retired_at').first('id', 'namespace', 'name');
  return row ? { id: Number(row.id), namespace: row.namespace as string, name: row.name as string } : null;
}
