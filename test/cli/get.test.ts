/**
 * `hearth get` and `hearth describe` against a database a real `hearth apply` filled with one
 * document of every kind: for every kind, the table has the columns of the kind's CRD (read from the
 * chart's generated CRD YAML, what `kubectl get` prints) with the document's values, one object by
 * name, -o json and -o yaml as manifests that read back alike, describe's spec, status and
 * references; the status following the database (a spec changed, a document named deleted, a key
 * revoked); and every refusal, one line on stderr. What is about the process (its output, exit code
 * and stderr) is a real subprocess; the per-kind texts are the commands' renderers, which real runs
 * are checked to print exactly.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  type AnyManifest,
  MANIFEST_KINDS,
  type ManifestKind,
  appliedManifestLinks,
  listAppliedManifests,
  manifestYaml,
  removeManifest,
} from '@hearth/core/manifests';
import { type TestDatabase, createTestDatabase, toYaml } from '../support/harness';
import * as m from '../support/manifests';
import { oneOfEveryKind } from '../support/every-kind';
import { describeText, getTable, resolveKind } from '../../apps/cli/src/commands/get';
import { REPO_ROOT, oneLine, runHearth, tempDir } from './run-hearth';

jest.setTimeout(120_000); // a real command is a process start, seconds on a busy machine

type Json = Record<string, any>;
const KINDS = Object.keys(MANIFEST_KINDS) as ManifestKind[];
const NS = m.NAMESPACE;
/** The keyword a spec field naming another document carries in its kind's schema (spec/names.ts). */
const REFERENCE_KEYWORD = 'x-hearth-reference';

let database: TestDatabase;
let dir: string;
let env: Record<string, string>;
/** The key ids `hearth apply` minted, by document name. */
const minted = new Map<string, string>();

/** One document of every kind (the first of each is the one walked), and what the refusals need besides. */
function documents(): AnyManifest[] {
  return [
    ...oneOfEveryKind('get'),
    m.environment('gone-live', 'get'),
    m.gameConfig('gone-config', { environment: 'gone-live', flags: [{ name: 'f', enabled: true }] }),
    // The same project name in another namespace: the not-found hint names it.
    { ...m.project('elsewhere', { plan: 'get-plan' }), metadata: { name: 'elsewhere', namespace: 'other' } } as AnyManifest,
  ];
}

/** The document walked for each kind: the first of it. */
const walked = new Map<ManifestKind, AnyManifest>();
for (const doc of documents()) if (!walked.has(doc.kind)) walked.set(doc.kind, doc);

/** The printer columns of a kind's CRD, from the chart's generated YAML (what `kubectl get` shows). */
function crdOf(kind: ManifestKind): Json {
  const file = path.join(REPO_ROOT, 'charts/hearth/templates/crds', `${MANIFEST_KINDS[kind].crd.plural}.yaml`);
  // The template's own lines (a comment, the Helm condition around the CRD) are not YAML of the CRD.
  const body = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('{{') && !line.startsWith('#'))
    .join('\n');
  return parse(body) as Json;
}
function columnsOf(kind: ManifestKind): { name: string; type: string; jsonPath: string; priority?: number }[] {
  const versions = crdOf(kind).spec.versions as Json[];
  return versions.find((v) => v.storage)!.additionalPrinterColumns;
}

/** A table as kubectl prints it: header cells and rows split on the column starts of the header. */
function parseTable(text: string): { header: string[]; rows: string[][] } {
  const lines = text.replace(/\n$/, '').split('\n');
  const starts = [...lines[0].matchAll(/(?:^|(?<=  ))(\S[^ ]*(?: \S+)*)/g)].map((x) => x.index ?? 0);
  const split = (line: string) => starts.map((start, i) => line.slice(start, i + 1 < starts.length ? starts[i + 1] : undefined).trim());
  return { header: split(lines[0]), rows: lines.slice(1).map(split) };
}

/**
 * What kubectl prints in a column for an object, read here by hand for the paths the CRDs use (a
 * field of spec, metadata or status; the Ready condition's field), so a path hearth get reads wrongly
 * shows; any other path fails the test until it is taught here.
 */
function expectedCell(obj: Json, column: { type: string; jsonPath: string }): RegExp | string {
  const condition = /^\.status\.conditions\[\?\(@\.type=="Ready"\)\]\.(\w+)$/.exec(column.jsonPath);
  const field = /^\.(spec|status|metadata)\.(\w+)$/.exec(column.jsonPath);
  let value: unknown;
  if (condition) value = (obj.status.conditions as Json[]).find((c) => c.type === 'Ready')?.[condition[1]];
  else if (field) value = obj[field[1]]?.[field[2]];
  else throw new Error(`the test reads no column path ${column.jsonPath}`);
  if (column.type === 'date') return /^(\d+[smhdy])+$/; // an age, as kubectl says one (5s, 2m3s)
  return value === undefined || value === null ? '-' : String(value);
}

/** A table without its last column (AGE): a second may pass between two renderings. */
const withoutAge = (text: string) => text.replace(/ +\S+$/gm, '');

/**
 * What `hearth get KIND NAME -o json|yaml|wide` and `hearth describe KIND NAME` print for a walked
 * document, rendered in this process as runGet and runDescribe render it (the namespace is the
 * walked documents' one; a kind without namespaces ignores it, as the commands do).
 */
async function rendered(kind: ManifestKind, name: string): Promise<{ json: string; yaml: string; wide: string; described: string }> {
  const [found] = await listAppliedManifests(database.db, kind, { namespace: NS, name });
  expect(found).toBeDefined();
  return {
    json: `${JSON.stringify(found, null, 2)}\n`,
    yaml: manifestYaml(found),
    wide: `${getTable(kind, [found], { allNamespaces: false, wide: true })}\n`,
    described: `${describeText(found, await appliedManifestLinks(database.db, found))}\n`,
  };
}

/** A process start takes seconds on a busy machine: a minute before a run is taken as hung. */
async function hearth(...args: string[]) {
  return runHearth(args, env, 60_000);
}

/** A run that succeeded with nothing on stderr; its stdout. */
async function ok(...args: string[]): Promise<string> {
  const run = await hearth(...args);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  return run.stdout;
}

/** A run refused: exit 1, nothing on stdout, the one line on stderr (without `hearth: `). */
async function refused(...args: string[]): Promise<string> {
  const run = await hearth(...args);
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  return oneLine(run.stderr).replace(/^hearth: /, '');
}

beforeAll(async () => {
  database = await createTestDatabase();
  dir = tempDir();
  env = { DATABASE_URL: database.url };
  const file = path.join(dir, 'all.yaml');
  fs.writeFileSync(file, toYaml(documents()));
  const run = await runHearth(['apply', '-f', file, '--json'], env);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  for (const r of JSON.parse(run.stdout).results as Json[]) {
    const key = (r.serverKey ?? r.licenceKey) as { keyId: string } | undefined;
    if (key) minted.set(r.name, key.keyId);
  }
  expect([...minted.keys()].sort()).toEqual(['get-key', 'get-licence']);
});
afterAll(async () => {
  await database.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * Each kind's text as `hearth get` and `describe` print it. Every kind's list (-A) is a real run, the
 * one process start per kind; the other outputs are the renderers those commands print with
 * (getTable, describeText, manifestYaml) on what they read (listAppliedManifests, appliedManifestLinks),
 * in this process. 'the real command prints…' below checks, through real runs, that each output is
 * exactly what its renderer gives.
 */
describe.each(KINDS)('%s', (kind) => {
  const doc = walked.get(kind)!;
  const namespaced = MANIFEST_KINDS[kind].namespaced;
  const plural = MANIFEST_KINDS[kind].crd.plural;
  let object: Json;
  let yaml: string;
  let list: string;
  let wide: string;
  let described: string;

  beforeAll(async () => {
    list = await ok('get', plural, '-A');
    const read = await rendered(kind, doc.metadata.name);
    [object, yaml, wide, described] = [JSON.parse(read.json) as Json, read.yaml, read.wide, read.described];
  });

  test('-o json: the manifest applied, its spec as written (defaults added), Ready at generation 1', () => {
    expect(Object.keys(object)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(object).toMatchObject({ apiVersion: doc.apiVersion, kind, metadata: { name: doc.metadata.name, generation: 1 }, spec: doc.spec });
    expect(object.metadata.namespace).toBe(namespaced ? NS : undefined);
    expect(Date.now() - Date.parse(object.metadata.creationTimestamp)).toBeLessThan(10 * 60_000);
    expect(object.status).toMatchObject({
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled', observedGeneration: 1 }],
    });
    if (kind === 'ServerKey' || kind === 'LicenceKey') expect(object.status.keyId).toBe(minted.get(doc.metadata.name));
  });

  test('-o yaml: the same object, parsed back', () => {
    expect(parse(yaml)).toEqual(object);
  });

  test("the list (-A): NAMESPACE of a namespaced kind, NAME, the CRD's printer columns (not the wide ones), each with the object's value; the renderer's table", async () => {
    const columns = columnsOf(kind).filter((c) => !c.priority);
    const { header, rows } = parseTable(list);
    const first = namespaced ? 1 : 0;
    expect(header).toEqual([...(namespaced ? ['NAMESPACE'] : []), 'NAME', ...columns.map((c) => c.name.toUpperCase())]);
    const row = rows.find((r) => r[first] === doc.metadata.name && (!namespaced || r[0] === NS))!;
    expect(row).toBeDefined();
    columns.forEach((column, i) => expect(row[first + i + 1]).toMatch(expectedCell(object, column)));
    expect(row[header.indexOf('READY')]).toBe('True');
    // The renderer the other outputs here are checked through gives this very table (its AGE aside).
    const all = await listAppliedManifests(database.db, kind, { namespace: null });
    expect(withoutAge(list)).toBe(withoutAge(`${getTable(kind, all, { allNamespaces: true, wide: false })}\n`));
  });

  test('one by name, -o wide: NAME and every printer column, the priority ones too', () => {
    const one = parseTable(wide);
    expect(one.rows.map((r) => r[0])).toEqual([doc.metadata.name]);
    expect(one.header).toEqual(['NAME', ...columnsOf(kind).map((c) => c.name.toUpperCase())]);
    columnsOf(kind).forEach((column, i) => expect(one.rows[0][i + 1]).toMatch(expectedCell(object, column)));
  });

  test('describe: its names, spec, status and references', () => {
    const text = described;
    expect(text).toMatch(new RegExp(`^Name: +${doc.metadata.name}$`, 'm'));
    expect(text).toMatch(new RegExp(`^Kind: +${kind}$`, 'm'));
    expect(/^Namespace: +(\S+)$/m.exec(text)?.[1]).toBe(namespaced ? NS : undefined);
    expect(text).toMatch(/^Metadata:\n {2}Creation Timestamp: +\S+\n {2}Generation: +1$/m);
    // Every scalar field of the spec, under Spec, labelled as kubectl labels it.
    const spec = text.slice(text.indexOf('\nSpec:\n'), text.indexOf('\nStatus:\n'));
    for (const [field, value] of Object.entries(object.spec as Json)) {
      if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) expect(spec).toMatch(new RegExp(`^ {2}${label(field)}:$`, 'm'));
      else if (value !== null && typeof value === 'object')
        expect(spec).toMatch(new RegExp(`^ {2}${label(field)}: +${Array.isArray(value) ? '\\[\\]' : '\\{\\}'}$`, 'm'));
      else expect(spec).toMatch(new RegExp(`^ {2}${label(field)}: +${escape(String(value))}$`, 'm'));
    }
    expect(text).toMatch(/^Status:\n {2}Conditions:\n {4}Last Transition Time: +\S+$/m);
    expect(text).toMatch(/^ {2}Observed Generation: +1$/m);
    if (object.status.keyId) expect(text).toMatch(new RegExp(`^ {2}Key ID: +${object.status.keyId}$`, 'm'));
    expect(text).toMatch(/^ {4}Reason: +Reconciled$/m);
    expect(text).toMatch(/^ {4}Status: +True$/m);
    expect(text).toMatch(/^ {4}Type: +Ready$/m);
    // What it names: each reference field of its schema, the document it names, applied.
    const refersTo = section(text, 'Refers to');
    const referenceFields = Object.entries((MANIFEST_KINDS[kind].schema as unknown as Json).properties.spec.properties as Json).filter(
      ([, s]) => s[REFERENCE_KEYWORD],
    );
    expect(refersTo).toHaveLength(Math.max(1, referenceFields.length));
    for (const [field, schema] of referenceFields) {
      const target = schema[REFERENCE_KEYWORD] as ManifestKind;
      const name = MANIFEST_KINDS[target].namespaced ? `${NS}/${(doc.spec as Json)[field]}` : (doc.spec as Json)[field];
      expect(refersTo).toContainEqual(`${target} ${name} spec.${field}`);
    }
    // What names it: every walked document whose reference field names it.
    const referredBy = section(text, 'Referred to by');
    const naming = [...walked.values()].flatMap((other) =>
      Object.entries((MANIFEST_KINDS[other.kind].schema as unknown as Json).properties.spec.properties as Json)
        .filter(([field, s]) => s[REFERENCE_KEYWORD] === kind && (other.spec as Json)[field] === doc.metadata.name)
        .map(([field]) => `${other.kind} ${NS}/${other.metadata.name} spec.${field}`),
    );
    for (const line of naming) expect(referredBy).toContainEqual(line);
    if (naming.length === 0 && kind !== 'Plan' && kind !== 'Project' && kind !== 'GameEnvironment') expect(referredBy).toEqual(['<none>']);
  });
});

/** `appKey` → `App Key`, as describe labels it (and the test reads it). */
function label(field: string): string {
  return field
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/^./, (c) => c.toUpperCase())
    .replace(/\b(Sku|Url|Id)\b/g, (w) => w.toUpperCase());
}
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
/** The lines of a describe section (`Refers to:`), each with its spaces squeezed. */
function section(text: string, title: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(`${title}:`);
  expect(start).toBeGreaterThan(-1);
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('  ')) break;
    out.push(line.trim().replace(/ +/g, ' '));
  }
  return out;
}

test('every name kubectl takes for a kind (kind in any case, plural, singular, short names, with the group) names it, from the CRD', () => {
  for (const kind of KINDS) {
    const names = crdOf(kind).spec.names as { kind: string; plural: string; singular: string; shortNames?: string[] };
    for (const name of [names.kind, names.kind.toUpperCase(), names.plural, names.singular, ...(names.shortNames ?? []), `${names.plural}.hearth.gg`]) {
      expect([name, resolveKind(name)]).toEqual([name, kind]);
    }
  }
});

test('the same list under every name, and a List as kubectl prints one', async () => {
  // The AGE column aside: a second may pass between two runs.
  const byPlural = withoutAge(await ok('get', 'cardtypes', '-n', NS));
  expect(byPlural).toMatch(/^NAME +ENVIRONMENT +SLUG +PURCHASABLE +ENABLED +READY\nget-archer +get-live +archer +true +true +True\n$/);
  for (const name of ['CardType', 'cardtype', 'cardtypes.hearth.gg']) expect(withoutAge(await ok('get', name, '-n', NS))).toBe(byPlural);
  // One namespace: the project of the other is not listed.
  expect(parseTable(await ok('get', 'hproject', '-n', NS)).rows.map((r) => r[0])).toEqual(['get']);
  const list = JSON.parse(await ok('get', 'projects', '-A', '--json')) as Json;
  expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' } });
  expect((list.items as Json[]).map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['other/elsewhere', `${NS}/get`]);
  expect(parse(await ok('get', 'projects', '-A', '-o', 'yaml'))).toEqual(list);
});

test('a namespace with none: nothing on stdout, the line kubectl says on stderr, success', async () => {
  const run = await hearth('get', 'tours');
  expect(run).toMatchObject({ code: 0, stdout: '', stderr: 'No resources found in default namespace.\n' });
  expect(JSON.parse(await ok('get', 'tours', '-o', 'json')).items).toEqual([]);
});

/**
 * The per-kind tests above read -o json, -o yaml, -o wide and describe through the renderers; here
 * the real command prints exactly those texts, for the kind without namespaces and for a namespaced
 * one with a status of its own (the key id), each asked by another of its names. Before the tests
 * below change the documents.
 */
test.each(['Plan', 'ServerKey'] as const)('the real command prints what the renderers give: %s by name, -o json, -o yaml, -o wide, describe', async (kind) => {
  const name = walked.get(kind)!.metadata.name;
  const plural = MANIFEST_KINDS[kind].crd.plural;
  const scope = MANIFEST_KINDS[kind].namespaced ? ['-n', NS] : [];
  // Each a process start: two at a time.
  const [json, yaml] = await Promise.all([ok('get', kind, name, ...scope, '-o', 'json'), ok('get', plural, name, ...scope, '-o', 'yaml')]);
  const [wide, described] = await Promise.all([ok('get', kind.toLowerCase(), name, ...scope, '-o', 'wide'), ok('describe', plural, name, ...scope)]);
  const expected = await rendered(kind, name);
  expect({ json, yaml, wide: withoutAge(wide), described }).toEqual({ ...expected, wide: withoutAge(expected.wide) });
});

test('a read loads no package only migrating, validating, Redis or YAML needs (each is CPU at every start)', async () => {
  const preload = path.join(dir, 'record-packages.js');
  const record = path.join(dir, 'packages.json');
  fs.writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify(Object.keys(require.cache))));\n`,
  );
  const run = await runHearth(['get', 'cardtypes', '-n', NS], { ...env, NODE_OPTIONS: `--require ${preload}` }, 60_000);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  const packages = new Set(
    (JSON.parse(fs.readFileSync(record, 'utf8')) as string[]).flatMap((file) =>
      [...file.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)].slice(-1).map((m) => m[1]),
    ),
  );
  expect(packages).toContain('pg'); // what it reads with (knex is compiled in): the record sees the packages
  expect(['pg-boss', 'ioredis', '@bufbuild/cel', 'ajv', 'ajv-formats', 'yaml'].filter((name) => packages.has(name))).toEqual([]);
});

describe('the status follows the database', () => {
  test('a changed spec: generation and observedGeneration 2, the column its new value; the same again changes nothing', async () => {
    const file = path.join(dir, 'tour.yaml');
    fs.writeFileSync(file, toYaml([m.tour('get-tour', { environment: 'get-live', name: 'Basics', enabled: false })]));
    for (let i = 0; i < 2; i++) {
      await ok('apply', '-f', file);
      const tour = JSON.parse(await ok('get', 'tour', 'get-tour', '-n', NS, '-o', 'json')) as Json;
      expect(tour.metadata.generation).toBe(2);
      expect(tour.status.observedGeneration).toBe(2);
      expect(tour.status.conditions[0].observedGeneration).toBe(2);
    }
    const { header, rows } = parseTable(await ok('get', 'tours', 'get-tour', '-n', NS));
    expect(rows[0][header.indexOf('ENABLED')]).toBe('false');
  });

  test('a document named deleted: what names it is Ready=False (MissingReference), the deleted one is gone', async () => {
    await removeManifest(database.db, { kind: 'GameEnvironment', namespace: NS, name: 'gone-live' }, { announce: async () => undefined });
    const { header, rows } = parseTable(await ok('get', 'gameconfigs', '-n', NS));
    expect(rows.find((r) => r[0] === 'gone-config')![header.indexOf('READY')]).toBe('False');
    expect(rows.find((r) => r[0] === 'get-config')![header.indexOf('READY')]).toBe('True');
    const text = await ok('describe', 'gconf', 'gone-config', '-n', NS);
    expect(text).toMatch(/^ {4}Reason: +MissingReference$/m);
    expect(text).toMatch(/^ {4}Message: +spec\.environment names GameEnvironment tests\/gone-live, which was deleted$/m);
    expect(section(text, 'Refers to')).toEqual([`GameEnvironment ${NS}/gone-live spec.environment (deleted)`]);
    expect(parseTable(await ok('get', 'genv', '-n', NS)).rows.map((r) => r[0])).toEqual(['get-live']);
    expect(await refused('get', 'genv', 'gone-live', '-n', NS)).toMatch(/^no GameEnvironment "gone-live" in namespace "tests" \(deleted \d+s ago\)$/);
  });

  test('a key revoked: its document is Ready=False (KeyRevoked) and shows no key id', async () => {
    await ok('keys', 'revoke', minted.get('get-key')!);
    const key = JSON.parse(await ok('get', 'hkey', 'get-key', '-n', NS, '-o', 'json')) as Json;
    expect(key.status.keyId).toBeUndefined();
    expect(key.status.conditions[0]).toMatchObject({ status: 'False', reason: 'KeyRevoked' });
  });
});

describe('refusals: one line on stderr, exit 1', () => {
  test('an unknown kind: the nearest name, or the kinds', async () => {
    expect(await refused('get', 'cardtyps')).toBe('unknown kind "cardtyps" (did you mean CardType?)');
    expect(await refused('describe', 'curency', 'x')).toBe('unknown kind "curency" (did you mean Currency?)');
    expect(await refused('get', 'widgets')).toBe(
      `unknown kind "widgets"; the kinds are ${KINDS.join(', ')} (or their plurals: ${KINDS.map((k) => MANIFEST_KINDS[k].crd.plural).join(', ')})`,
    );
  });

  test('not found: kind, name and namespace, and --namespace where it is', async () => {
    expect(await refused('get', 'projects', 'get')).toBe(`no Project "get" in namespace "default"; it is in --namespace ${NS}`);
    expect(await refused('describe', 'projects', 'elsewhere', '-n', NS)).toBe('no Project "elsewhere" in namespace "tests"; it is in --namespace other');
    expect(await refused('get', 'projects', 'nowhere', '-n', NS)).toBe('no Project "nowhere" in namespace "tests"');
    expect(await refused('get', 'plans', 'nowhere')).toBe('no Plan "nowhere"');
  });

  test('a bad -o, --json with another -o, a name with -A', async () => {
    expect(await refused('get', 'plans', '-o', 'xml')).toBe('-o must be json, yaml or wide (not "xml")');
    expect(await refused('get', 'plans', '--json', '-o', 'yaml')).toBe('--json is -o json; it cannot go with -o yaml');
    expect(await refused('get', 'plans', 'get-plan', '-A')).toBe('a name cannot go with -A (--all-namespaces): name its namespace with -n');
  });
});
