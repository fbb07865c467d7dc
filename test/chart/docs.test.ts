/** docs/kubernetes.md's values table is the one charts/hearth/values.yaml makes (`make chart-docs`). */
import fs from 'node:fs';
import { DOC_FILE, VALUES_FILE, documentedValues, valuesTable, withTable } from './values-table';

test('the values table of docs/kubernetes.md matches values.yaml (run `make chart-docs`)', () => {
  const doc = fs.readFileSync(DOC_FILE, 'utf8');
  expect(doc).toBe(withTable(doc, valuesTable(fs.readFileSync(VALUES_FILE, 'utf8'))));
});

test('every leaf value of values.yaml is documented, by itself or by a documented parent', () => {
  const text = fs.readFileSync(VALUES_FILE, 'utf8');
  const documented = new Set(documentedValues(text).map((r) => r.key));
  const undocumented: string[] = [];
  const walk = (value: unknown, keys: string[]) => {
    const key = keys.join('.');
    if (keys.length && [...documented].some((d) => key === d || key.startsWith(`${d}.`))) return;
    if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length) {
      for (const [k, v] of Object.entries(value)) walk(v, [...keys, k]);
    } else undocumented.push(key);
  };
  walk(require('yaml').parse(text), []);
  expect(undocumented).toEqual([]);
});

test('the table parser reads a `# --` description, its continuation lines and nested keys', () => {
  const rows = documentedValues(['a:', '  # -- first line', '  # second line', '  b: 3', '', '  # -- orphan', '', '  c: {}', '# -- top', 'd: [x]'].join('\n'));
  expect(rows).toEqual([
    { key: 'a.b', type: 'int', default: 3, description: 'first line second line' },
    { key: 'd', type: 'list', default: ['x'], description: 'top' },
  ]);
});
