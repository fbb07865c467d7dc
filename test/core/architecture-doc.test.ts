/**
 * docs/architecture.md says where things are; this holds it to the tree and to the layer rules
 * (.dependency-cruiser.cjs), so a folder added, moved or removed, or a rule changed, fails here until
 * the page says so too:
 * - "Layout": every folder and top-level file of apps/core/src and every workspace is listed, and
 *   everything listed exists;
 * - "Layers": each layer's names are its pattern's in .dependency-cruiser.cjs, and the layers together
 *   are exactly core's folders and top-level files;
 * - "Layers": the exceptions the page names are the ones the rules have (today none).
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const CORE = 'apps/core/src/';
const doc = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');

function section(title: string): string {
  const start = doc.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`docs/architecture.md has no "## ${title}"`);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** Core's folders (`auth/`) and top-level files (`hearth.ts`), as the tree has them. */
function coreEntries(): string[] {
  return fs
    .readdirSync(path.join(ROOT, CORE), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() || entry.name.endsWith('.ts'))
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
    .sort();
}

/**
 * The paths the Layout block lists. A line's names are its first column (names apart by one space,
 * the description after two or more); a line indented by two is under the last unindented one; a
 * line indented to the description column continues the description above.
 */
function layoutPaths(): string[] {
  const block = /```\n([\s\S]*?)```/.exec(section('Layout'))?.[1];
  if (!block) throw new Error('"## Layout" has no code block');
  const DESCRIPTION_COLUMN = 24;
  const paths: string[] = [];
  let parent = '';
  for (const line of block.split('\n')) {
    if (!line.trim()) continue;
    const indent = line.length - line.trimStart().length;
    if (indent >= DESCRIPTION_COLUMN) continue;
    if (indent !== 0 && indent !== 2) throw new Error(`a Layout line indented by ${indent}: ${line}`);
    const names = line.trimStart().split(/ {2,}/)[0].split(' ');
    if (indent === 0) parent = names[0];
    for (const name of names) paths.push(indent === 0 ? name : parent + name);
  }
  return paths;
}

/** `routes/<area>/` stands for every folder of routes/: its fixed part must exist. */
function exists(listed: string): boolean {
  const fixed = listed.split('<')[0];
  return fs.existsSync(path.join(ROOT, fixed)) && (!listed.endsWith('/') || fs.statSync(path.join(ROOT, fixed)).isDirectory());
}

describe('docs/architecture.md "Layout"', () => {
  const listed = layoutPaths();

  test('the block is read (a change of its format fails here, not silently)', () => {
    expect(listed).toEqual(expect.arrayContaining(['apps/core/src/', 'apps/core/src/manifests/', 'apps/api/src/http/', 'test/']));
  });

  test('every folder and top-level file of apps/core/src is listed', () => {
    const missing = coreEntries().filter((entry) => !listed.includes(CORE + entry));
    expect(missing).toEqual([]);
  });

  test('every app under apps/ and every workspace is listed', () => {
    const apps = fs
      .readdirSync(path.join(ROOT, 'apps'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `apps/${entry.name}`);
    const workspaces = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;
    const missing = [...new Set([...apps, ...workspaces])].filter((app) => !listed.some((p) => p.startsWith(`${app}/`))).sort();
    expect(missing).toEqual([]);
  });

  test('everything listed exists', () => {
    expect(listed.filter((p) => !exists(p))).toEqual([]);
  });
});

interface Rule {
  name: string;
  severity?: string;
  from?: { path?: string | string[]; pathNot?: string | string[] };
  to?: { path?: string | string[]; pathNot?: string | string[] };
}
interface CruiserConfig {
  forbidden?: Rule[];
  allowed?: unknown[];
  options?: { exclude?: unknown; includeOnly?: unknown };
}
// The config is CommonJS: required as dependency-cruiser reads it.
const cruiser = require(path.join(ROOT, '.dependency-cruiser.cjs')) as CruiserConfig;
const forbidden = cruiser.forbidden ?? [];

/** The layers' patterns, bottom to top: the ones a module of core must match one of. */
const LAYER_PATTERNS: string[] = (() => {
  const rule = forbidden.find((r) => r.name === 'core-module-has-a-layer');
  const patterns = rule?.from?.pathNot;
  if (!Array.isArray(patterns)) throw new Error('.dependency-cruiser.cjs: core-module-has-a-layer lists no layers in from.pathNot');
  return patterns;
})();

/** A layer pattern's names: `^apps/core/src/(db|coord)/` → db/, coord/; `(ids|logger)[.]ts$` → ids.ts, logger.ts. */
function namesOfPattern(pattern: string): string[] {
  const body = pattern.replace(`^${CORE}`, '');
  const names: string[] = [];
  for (const [, alternatives, ending] of body.matchAll(/\(([\w|-]+)\)(\/|\[\.\]ts\$)/g)) {
    for (const name of alternatives.split('|')) names.push(ending === '/' ? `${name}/` : `${name}.ts`);
  }
  const single = /^([\w-]+)\/$/.exec(body);
  if (single) names.push(`${single[1]}/`);
  // Each name read must be one the pattern matches: a pattern written another way fails here.
  for (const name of names)
    expect({ name, matched: new RegExp(pattern).test(CORE + (name.endsWith('/') ? `${name}x.ts` : name)) }).toEqual({ name, matched: true });
  return names;
}

/** The Layers table's rows: the layer and the names in backticks of its first cell (`auth/`, `db/`, `ids`, `hearth.ts`). */
function layerRows(): { layer: string; names: string[] }[] {
  return section('Layers')
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| layer ') && !line.startsWith('|---'))
    .map((line) => {
      const cell = line.split('|')[1].trim();
      const names = [...cell.matchAll(/`([^`]+)`/g)].flatMap((m) => m[1].split(/\s+/));
      return { layer: cell.split(' ')[0], names };
    });
}

/** A name of the table as a core entry: `auth` or `auth/` is a folder, `ids` or `ids.ts` a file. */
function entryOf(name: string, entries: string[]): string {
  if (name.endsWith('/') || name.endsWith('.ts')) return name;
  return entries.includes(`${name}/`) ? `${name}/` : `${name}.ts`;
}

describe('docs/architecture.md "Layers"', () => {
  const entries = coreEntries();
  const rows = layerRows();

  test("each layer's names are its pattern's in .dependency-cruiser.cjs", () => {
    expect(rows.map((r) => r.layer)).toEqual(['contract', 'infrastructure', 'domain', 'manifests', 'entry']);
    expect(rows).toHaveLength(LAYER_PATTERNS.length);
    rows.forEach((row, i) => {
      const documented = row.names.map((name) => entryOf(name, entries)).sort();
      expect({ layer: row.layer, names: documented }).toEqual({ layer: row.layer, names: namesOfPattern(LAYER_PATTERNS[i]).sort() });
    });
  });

  test("the layers together are core's folders and top-level files, each in one layer", () => {
    const documented = rows.flatMap((row) => row.names.map((name) => entryOf(name, entries)));
    expect(documented.filter((name, i) => documented.indexOf(name) !== i)).toEqual([]);
    expect([...documented].sort()).toEqual(entries);
  });

  test("the exceptions it names are the rules' exceptions", () => {
    // An exception: a path a rule leaves out beyond the layers themselves, an `allowed` rule, a rule
    // that only warns, or modules kept out of the cruise.
    const exceptions: string[] = [];
    const asList = (value: string | string[] | undefined) => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
    for (const rule of forbidden) {
      for (const pattern of [...asList(rule.from?.pathNot), ...asList(rule.to?.pathNot)]) {
        if (!LAYER_PATTERNS.includes(pattern)) exceptions.push(pattern.replace(`^${CORE}`, '').replace('[.]', '.').replace(/\$$/, ''));
      }
      if (rule.severity !== 'error') exceptions.push(`${rule.name} (${rule.severity ?? 'no severity'})`);
    }
    for (const allowed of cruiser.allowed ?? []) exceptions.push(`allowed: ${JSON.stringify(allowed)}`);
    if (cruiser.options?.exclude !== undefined) exceptions.push(`exclude: ${JSON.stringify(cruiser.options.exclude)}`);
    if (cruiser.options?.includeOnly !== undefined) exceptions.push(`includeOnly: ${JSON.stringify(cruiser.options.includeOnly)}`);

    const sentences = section('Layers')
      .split(/(?<=[.;:])\s+/)
      .filter((sentence) => /exception/i.test(sentence));
    expect(sentences.length).toBeGreaterThan(0);
    const saysNone = (sentence: string) => /\bno exceptions?[.;]/i.test(sentence.replace(/\s+/g, ' '));
    if (exceptions.length === 0) {
      // The rules have none: every sentence about exceptions says so, and names none.
      expect(sentences.filter((sentence) => !saysNone(sentence))).toEqual([]);
    } else {
      // The rules have some: the page does not say none, and names each.
      expect(sentences.filter(saysNone)).toEqual([]);
      const text = sentences.join(' ');
      expect(exceptions.filter((exception) => !text.includes(exception))).toEqual([]);
    }
  });
});
