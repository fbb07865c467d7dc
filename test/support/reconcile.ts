/**
 * Applying one manifest as `hearth apply` does, for the suites of a kind (what it stores, what it
 * refuses): over a harness's database or a domain suite's transaction alike. What a kind refuses is
 * read off the ManifestError (its field and reason) and the content version it must not move.
 */
import { type AnyManifest, ManifestError, reconcileManifest, validateManifest } from '@hearth/core/manifests';

type Queryable = Parameters<typeof reconcileManifest>[0];
type Announcer = Parameters<typeof reconcileManifest>[2];

/** Validates and reconciles `doc` as `hearth apply` does: a refusal of either rejects. */
export async function reconcileDocument(db: Queryable, bus: Announcer, doc: AnyManifest) {
  return reconcileManifest(db, validateManifest(JSON.parse(JSON.stringify(doc)), 'test'), bus);
}

/** The version of an environment's content of `kind` (0 while it has none). */
export async function contentVersion(db: Queryable, kind: string, environmentName = 'alpha-live'): Promise<number> {
  const row = await db('content_versions as v')
    .join('environments as e', 'e.id', 'v.environment_id')
    .where({ 'e.name': environmentName, 'v.kind': kind })
    .first('v.version');
  return row ? Number(row.version) : 0;
}

/** What `work` was refused with: it must reject (or throw) a ManifestError. */
export async function manifestRefusal(work: () => unknown): Promise<ManifestError> {
  const err = await Promise.resolve()
    .then(work)
    .then(
      () => null,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(ManifestError);
  return err as ManifestError;
}

/** Reconciles each document, expecting each refused on its field with a reason that matches. */
export async function expectEachRefused(db: Queryable, bus: Announcer, cases: [AnyManifest, string, RegExp][]): Promise<void> {
  for (const [doc, field, reason] of cases) {
    const err = await manifestRefusal(() => reconcileDocument(db, bus, doc));
    // The document's name beside the field, so a failure says which case it was.
    expect({ doc: doc.metadata.name, field: err.field }).toEqual({ doc: doc.metadata.name, field });
    expect(err.reason).toMatch(reason);
  }
}
