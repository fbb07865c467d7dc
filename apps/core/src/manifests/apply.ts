import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import type { Announcer } from '../invalidation';
import { type ReconcileResult, reconcileAll } from './reconcile';
import { ManifestError, validateManifest } from './validate';
import type { AnyManifest } from './schemas';

export interface LoadedManifest {
  doc: AnyManifest;
  origin: string;
}

/** Reads a YAML file, or every .yaml/.yml file of a folder (in name order), into validated documents. */
export function loadManifests(fileOrDir: string): LoadedManifest[] {
  const stat = fs.statSync(fileOrDir);
  const files = stat.isDirectory()
    ? fs.readdirSync(fileOrDir).filter((f) => /\.ya?ml$/.test(f)).sort().map((f) => path.join(fileOrDir, f))
    : [fileOrDir];
  const loaded: LoadedManifest[] = [];
  for (const file of files) {
    const docs = parseAllDocuments(fs.readFileSync(file, 'utf8'));
    docs.forEach((parsed, i) => {
      const origin = `${path.basename(file)}#${i + 1}`;
      // The parser's message goes on to quote the source over several lines; the first says it all.
      if (parsed.errors.length > 0) throw new ManifestError(origin, 'yaml', parsed.errors[0].message.split('\n')[0]);
      const doc = parsed.toJS();
      if (doc === null || doc === undefined) return; // an empty document between separators
      loaded.push({ doc: validateManifest(doc, origin), origin });
    });
  }
  return loaded;
}

/** For an apply no running process has to hear of: seeding a database before anything serves it. */
const NOBODY_LISTENING: Announcer = { announce: async () => undefined };

/**
 * Applies documents all or nothing: every one is checked first, then all are reconciled in one
 * transaction, so a bad document leaves nothing of the batch applied. What changed is announced on
 * `bus` once that transaction commits (each change once), never for a batch that rolled back.
 */
export async function applyManifests(db: Queryable, docs: LoadedManifest[], bus: Announcer = NOBODY_LISTENING): Promise<ReconcileResult[]> {
  return inTransaction(db, (trx) => reconcileAll(trx, docs, bus));
}
