/**
 * Core's entry points as docs/architecture.md "How an area plugs in" describes them: every folder of
 * apps/core/src has an index.ts, importable as @hearth/core/<folder> through the one "./*" pattern of
 * apps/core/package.json; an index re-exports only its own folder's modules; the root, @hearth/core,
 * re-exports only the top-level files, and loads no area: HearthCore, which wires every area, is an
 * entry of its own (@hearth/core/hearth), so what imports the root's vocabulary loads that alone.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const CORE = path.resolve(__dirname, '..', '..', 'apps', 'core');
const SRC = path.join(CORE, 'src');

const folders = fs
  .readdirSync(SRC, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/** The module specifiers an entry file re-exports from (or imports). */
function specifiersOf(file: string): string[] {
  return [...fs.readFileSync(file, 'utf8').matchAll(/\bfrom\s+'([^']+)'/g)].map((m) => m[1]);
}

test('apps/core/package.json maps the root, HearthCore and every folder, by one pattern', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(CORE, 'package.json'), 'utf8')) as { exports?: unknown };
  expect(pkg.exports).toEqual({ '.': './src/index.ts', './hearth': './src/hearth.ts', './*': './src/*/index.ts' });
});

test('every folder of core has an entry point', () => {
  expect(folders.filter((folder) => !fs.existsSync(path.join(SRC, folder, 'index.ts')))).toEqual([]);
});

test("a folder's entry re-exports only its own folder's modules", () => {
  const strays = folders.flatMap((folder) =>
    specifiersOf(path.join(SRC, folder, 'index.ts'))
      .filter((specifier) => !specifier.startsWith('./'))
      .map((specifier) => `${folder}/index.ts: ${specifier}`),
  );
  expect(strays).toEqual([]);
});

test('the root entry re-exports only top-level files of core', () => {
  const specifiers = specifiersOf(path.join(SRC, 'index.ts'));
  expect(specifiers).not.toContain('./hearth');
  expect(specifiers.filter((specifier) => !/^\.\/[\w-]+$/.test(specifier) || !fs.existsSync(path.join(SRC, `${specifier}.ts`)))).toEqual([]);
});

test('the entry points resolve as the other workspaces import them', () => {
  // jest resolves through node_modules/@hearth/core and the package's "exports", as tsx and esbuild do.
  expect(require.resolve('@hearth/core')).toBe(path.join(SRC, 'index.ts'));
  for (const folder of folders) expect(require.resolve(`@hearth/core/${folder}`)).toBe(path.join(SRC, folder, 'index.ts'));
});

test('the root entry loads no area of core (a process that imports it alone)', () => {
  // A process of its own: jest's module registry is not node's, and the question is what node loads.
  const script = `require('tsx/cjs'); require('@hearth/core');
    process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(SRC + path.sep)}))));`;
  const loaded = (JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: CORE, encoding: 'utf8' })) as string[]).map((file) =>
    path.relative(SRC, file),
  );
  expect(loaded).toContain('index.ts');
  expect(loaded).not.toContain('hearth.ts');
  // Beside the top-level files, only the small shared pieces they stand on: error codes, the
  // transaction helper, the client address.
  expect([...new Set(loaded.map((file) => path.dirname(file)))].sort()).toEqual(['.', 'contract', 'db', 'net']);
  expect(require.resolve('@hearth/core/hearth')).toBe(path.join(SRC, 'hearth.ts'));
});
