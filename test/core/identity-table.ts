/**
 * docs/manifests.md's table of identity fields, written from the kinds' schemas
 * (apps/core/src/manifests/identity-fields.ts). `make crds` rewrites it with the CRDs;
 * test/core/identity-fields.test.ts fails while it differs.
 *
 *   node --import tsx test/core/identity-table.ts --write
 */
import fs from 'node:fs';
import path from 'node:path';
import { identityFieldsTable } from '@hearth/core';

export const DOC_FILE = path.resolve(__dirname, '..', '..', 'docs', 'manifests.md');
export const START = '<!-- identity-fields:start (make crds writes this table from the kinds\' schemas) -->';
export const END = '<!-- identity-fields:end -->';

/** The document with its table replaced by `table`; an error when the markers are missing. */
export function withTable(doc: string, table: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOC_FILE} has no ${START} … ${END} block`);
  return `${doc.slice(0, start + START.length)}\n${table}\n${doc.slice(end)}`;
}

if (require.main === module && process.argv.includes('--write')) {
  fs.writeFileSync(DOC_FILE, withTable(fs.readFileSync(DOC_FILE, 'utf8'), identityFieldsTable()));
  console.log(`wrote the identity fields table of ${path.relative(process.cwd(), DOC_FILE)}`);
}
