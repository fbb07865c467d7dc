/**
 * An area declares its manifest kinds once, in manifests/kinds/<area>.ts (schema, CRD parts and
 * reconciler together), and the list of kinds (manifests/schemas.ts) names each area by one line
 * (docs/architecture.md "How an area plugs in"): every kind of MANIFEST_KINDS is one area's, as that
 * area declared it, under the name its documents carry.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MANIFEST_KINDS } from '@hearth/core/manifests';

const SRC = path.resolve(__dirname, '..', '..', 'apps', 'core', 'src');
const KINDS = path.join(SRC, 'manifests', 'kinds');

const areaFiles = fs
  .readdirSync(KINDS)
  .filter((file) => file.endsWith('.ts'))
  .sort();

/** What each area file exports: its list of kinds, and nothing else. */
const exportsOf = (file: string) => Object.entries(require(path.join(KINDS, file)) as Record<string, Record<string, unknown>>);
const areaLists = areaFiles.flatMap((file) => exportsOf(file).map(([name, kinds]) => ({ area: path.basename(file, '.ts'), name, kinds })));

test("each file of manifests/kinds/ is an area's: a folder of core of the same name, exporting its list", () => {
  expect(areaFiles.length).toBeGreaterThan(10);
  expect(areaFiles.map((file) => ({ file, exports: exportsOf(file).map(([name]) => name) }))).toEqual(
    areaFiles.map((file) => ({ file, exports: [expect.stringMatching(/^[a-z]+Kinds$/)] })),
  );
  expect(areaLists.filter(({ area }) => !fs.statSync(path.join(SRC, area), { throwIfNoEntry: false })?.isDirectory()).map(({ area }) => area)).toEqual([]);
});

test("MANIFEST_KINDS is the areas' lists and nothing else, each kind declared by one area", () => {
  const declared = areaLists.flatMap(({ kinds }) => Object.keys(kinds));
  expect(declared.filter((kind, i) => declared.indexOf(kind) !== i)).toEqual([]);
  expect([...declared].sort()).toEqual(Object.keys(MANIFEST_KINDS).sort());
  for (const { kinds } of areaLists) {
    for (const [kind, declaration] of Object.entries(kinds)) expect(MANIFEST_KINDS[kind as keyof typeof MANIFEST_KINDS]).toBe(declaration);
  }
});

test('schemas.ts names each area by one line, its list', () => {
  const source = fs.readFileSync(path.join(SRC, 'manifests', 'schemas.ts'), 'utf8');
  const body = /export const MANIFEST_KINDS = \{\n([\s\S]*?)\n\};/.exec(source)?.[1];
  expect(body).toBeDefined();
  expect(body!.split('\n').map((line) => line.trim())).toEqual(expect.arrayContaining(areaLists.map(({ name }) => `...${name},`)));
  expect(body!.split('\n').filter((line) => !/^\s*\.\.\.[a-z]+Kinds,$/.test(line))).toEqual([]);
});

test('a kind is keyed by the name its documents carry', () => {
  const named = Object.entries(MANIFEST_KINDS).map(([kind, { schema }]) => [
    kind,
    (schema as unknown as { properties: { kind: { const: string } } }).properties.kind.const,
  ]);
  expect(named.filter(([kind, carried]) => kind !== carried)).toEqual([]);
});
