import fs from 'node:fs';
import path from 'node:path';
import type { YAMLError } from 'yaml';
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import type { Announcer } from '../invalidation';
import { type ReconcileResult, reconcileAll } from './reconcile';
import { ManifestError } from './manifest-error';
import { validateManifest } from './validate';
import type { AnyManifest } from './schemas';
import { yaml } from './yaml';

export interface LoadedManifest {
  doc: AnyManifest;
  origin: string;
}

/** Reads a YAML file, or every .yaml/.yml file of a folder (in name order), into validated documents. */
export function loadManifests(fileOrDir: string): LoadedManifest[] {
  const stat = fs.statSync(fileOrDir);
  const files = stat.isDirectory()
    ? fs
        .readdirSync(fileOrDir)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
        .map((f) => path.join(fileOrDir, f))
    : [fileOrDir];
  const loaded: LoadedManifest[] = [];
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const docs = yaml().parseAllDocuments(text);
    docs.forEach((parsed, i) => {
      const origin = `${path.basename(file)}#${i + 1}`;
      // The parser's message goes on to quote the source over several lines: its first line, and the
      // document's line it points at, quoted (one line of output, as every refusal).
      if (parsed.errors.length > 0) throw new ManifestError(origin, 'yaml', yamlErrorLine(parsed.errors[0], text));
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

/** A YAML syntax error in one line: what the parser says, at which line, and that line of the file as written. */
function yamlErrorLine(error: YAMLError, text: string): string {
  const what = error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
  const at = error.linePos?.[0];
  if (!at) return what;
  // Where the parser points past what is written (an unclosed bracket at the end of the file), the last written line before it.
  const lines = text.split('\n');
  let n = Math.min(at.line, lines.length);
  while (n > 1 && lines[n - 1].trim() === '') n--;
  return `${what} at line ${at.line}, column ${at.col}: ${JSON.stringify(lines[n - 1].trim())}${n === at.line ? '' : ` (line ${n})`}`;
}
