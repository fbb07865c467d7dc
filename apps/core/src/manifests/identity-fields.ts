/**
 * The identity fields of every kind, as one table (docs/manifests.md "Identity fields"): a kind's
 * immutable fields are the ones its spec schema marks with `immutable()` (spec/rules.ts), each with
 * why; a kind with none says here why none of its fields names an identity. The CRDs' transition
 * rules and `hearth apply`'s refusal come from the same marks, so the table, the API server and the
 * CLI cannot disagree. `make crds` writes the table into the docs; a test fails while they differ.
 */
import { immutableFields, type IdentityNote } from '../contract/rules';
import { MANIFEST_KINDS, type ManifestKind } from './schemas';

/** Why a kind has no identity field: every field of its spec may change, and changing it back undoes it. */
export const KINDS_WITHOUT_IDENTITY_FIELDS: Partial<Record<ManifestKind, string>> = {
  Plan: 'its name is its identity; every number may be raised or lowered (a lower cap refuses what is new and takes nothing away)',
  Project: 'its name is its identity; plan, review, switches and settings are meant to change',
  GameConfig: "no player's data names it; `environment` moves its values, tables and flags, and moving it back brings them back",
  BlogCategory: "no player's data names a category; a new `slug` is a new address for its posts",
  BlogPost: "no player's data names a post; a new `slug` is a new address",
  DashboardMember: 'who it names and what they may do are what an SRE edits; permissions are checked on every call',
};

export interface IdentityRow {
  kind: ManifestKind;
  fields: { field: string; note: IdentityNote }[];
  /** For a kind without identity fields: why. */
  none?: string;
}

/** Every kind in the order documents are applied, with its identity fields or why it has none. */
export function identityRows(): IdentityRow[] {
  return (Object.keys(MANIFEST_KINDS) as ManifestKind[]).map((kind) => {
    const spec = (MANIFEST_KINDS[kind].schema as unknown as { properties: { spec: Record<string, unknown> } }).properties.spec;
    const fields = immutableFields(spec).map(({ field, note }) => ({ field, note }));
    return fields.length > 0 ? { kind, fields } : { kind, fields, none: KINDS_WITHOUT_IDENTITY_FIELDS[kind] };
  });
}

/** The Markdown table of identity fields (docs/manifests.md). */
export function identityFieldsTable(): string {
  const lines = ['| kind | identity fields (immutable) | why |', '|---|---|---|'];
  for (const row of identityRows()) {
    if (row.fields.length === 0) {
      lines.push(`| \`${row.kind}\` | none | ${row.none ?? '(undecided)'} |`);
      continue;
    }
    const fields = row.fields.map((f) => `\`${f.field}\``).join(', ');
    const why = row.fields.map((f) => `\`${f.field}\`: ${f.note.why}${f.note.change ? ` (to change it: ${f.note.change})` : ''}`).join('; ');
    lines.push(`| \`${row.kind}\` | ${fields} | ${why} |`);
  }
  return lines.join('\n');
}
