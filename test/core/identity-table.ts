/**
 * docs/manifests.md's tables written from the kinds' schemas: the identity fields
 * (apps/core/src/manifests/identity-fields.ts) and which spec fields each kind requires
 * (apps/core/src/manifests/spec-fields.ts). `make crds` rewrites them with the CRDs;
 * test/core/identity-fields.test.ts fails while either differs.
 *
 *   node --import tsx test/core/identity-table.ts --write
 */
import fs from 'node:fs';
import path from 'node:path';
import { identityFieldsTable, specFieldsTable } from '@hearth/core/manifests';

export const DOC_FILE = path.resolve(__dirname, '..', '..', 'docs', 'manifests.md');
/** The generated blocks of the document: each between its markers, and what writes it. */
export const BLOCKS = {
  'identity-fields': identityFieldsTable,
  'spec-fields': specFieldsTable,
} as const;
export type BlockName = keyof typeof BLOCKS;

const startOf = (block: BlockName) => `<!-- ${block}:start (make crds writes this table from the kinds' schemas) -->`;
const endOf = (block: BlockName) => `<!-- ${block}:end -->`;

/** The document with the block's table replaced by `table`; an error when its markers are missing. */
export function withTable(doc: string, table: string, block: BlockName = 'identity-fields'): string {
  const start = doc.indexOf(startOf(block));
  const end = doc.indexOf(endOf(block));
  if (start < 0 || end < start) throw new Error(`${DOC_FILE} has no ${startOf(block)} … ${endOf(block)} block`);
  return `${doc.slice(0, start + startOf(block).length)}\n${table}\n${doc.slice(end)}`;
}

/** The document with every generated block as the schemas write it. */
export function withEveryTable(doc: string): string {
  return (Object.keys(BLOCKS) as BlockName[]).reduce((text, block) => withTable(text, BLOCKS[block](), block), doc);
}

if (require.main === module && process.argv.includes('--write')) {
  fs.writeFileSync(DOC_FILE, withEveryTable(fs.readFileSync(DOC_FILE, 'utf8')));
  console.log(`wrote the identity fields and spec fields tables of ${path.relative(process.cwd(), DOC_FILE)}`);
}
