/**
 * docs/manifests.md against the code, so the page cannot fall behind again: its table lists every
 * kind of MANIFEST_KINDS with its scope, `hearth apply`'s dependency order is the reconcilers'
 * order, and "Deletion" names exactly the kinds whose documents are removed (and says of each other
 * kind that it is not).
 */
import fs from 'node:fs';
import path from 'node:path';
import { MANIFEST_KINDS, type ManifestKind, isRemovable } from '@hearth/core/manifests';

const page = fs.readFileSync(path.resolve(__dirname, '../../docs/manifests.md'), 'utf8');
const kinds = Object.keys(MANIFEST_KINDS) as ManifestKind[];

/** The text of a section: from its heading to the next heading of the same or a higher level. */
function section(heading: string): string {
  const start = page.indexOf(`${heading}\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  const level = heading.split(' ')[0];
  const rest = page.slice(start + heading.length + 1);
  const next = rest.search(new RegExp(`^#{1,${level.length}} `, 'm'));
  return next < 0 ? rest : rest.slice(0, next);
}

test('the table of kinds lists every kind, in the order of the code, with its scope', () => {
  const rows = [...page.matchAll(/^\| `(\w+)` \| (cluster|namespace) \|/gm)].map((m) => ({ kind: m[1], scope: m[2] }));
  expect(rows).toEqual(kinds.map((kind) => ({ kind, scope: MANIFEST_KINDS[kind].namespaced ? 'namespace' : 'cluster' })));
});

test("hearth apply's dependency order is the order the reconcilers run in", () => {
  const documented = /in dependency order \(([^)]+)\)/.exec(section('## `hearth apply -f FILE_OR_DIR`'))?.[1];
  expect(documented?.split(',').map((kind) => kind.trim())).toEqual(kinds);
  // reconcileAll runs MANIFEST_KINDS' order, each kind by the reconciler it declares.
  expect(kinds.filter((kind) => typeof MANIFEST_KINDS[kind].reconciler.reconcile !== 'function')).toEqual([]);
});

test('"Deletion" names each kind whose documents are removed, and says of every other kind that it is not', () => {
  const deletion = section("### Deletion (the operator's finalizer)");
  const described = new Set([...deletion.matchAll(/`(\w+)`: /g)].map((m) => m[1]).filter((word) => (kinds as string[]).includes(word)));
  expect([...described].sort()).toEqual(kinds.filter(isRemovable).sort());
  for (const kind of kinds.filter((k) => !isRemovable(k))) expect(deletion).toContain(`\`${kind}\` is not removed`);
});

test('"Adding a kind" does not use a kind that exists as its example of a new one', () => {
  const adding = section('### Adding a kind');
  for (const kind of kinds) expect(adding).not.toContain(`kind('${kind}'`);
});
