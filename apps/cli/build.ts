/**
 * `npm run build` (`make build`): the `hearth` command as plain JavaScript, dist/hearth.js, that runs
 * with `node` alone (no tsx at run time): the image's entry point (Dockerfile, docs/kubernetes.md).
 *
 * esbuild bundles the command's entry, apps/cli/src/main.ts, with every workspace it imports
 * (@hearth/*, whatever workspaces come), the migrations and the SQL function files, and the few
 * plain-JavaScript packages in INLINED_PACKAGES. Every other package stays an external
 * `require` served by node_modules: the image installs the production dependencies anyway (the
 * embedded PostgreSQL binaries, ESM-only packages such as @kubernetes/client-node), and several load
 * files by name at run time that a bundle would lose (pino's worker-thread transports, knex's dialect
 * loader, pg's optional pg-native, ws's optional bufferutil). test/build/bundle.test.ts checks that
 * each external is a production dependency of the workspace that imports it.
 *
 * Three things the sources find by their own place, kept working in the bundle:
 * - migrations/: knex cannot load .ts files without tsx, so the build compiles them in, replacing
 *   apps/core/src/db/bundled-migrations.ts with a module that requires them all, under their file names,
 *   when knex first asks for them (so a command that does not migrate does not load them).
 * - the database functions' files (apps/core/src/<area>/sql/*.sql), compiled in as text in place of
 *   apps/core/src/db/bundled-sql-functions.ts.
 * - `__dirname` of a workspace file (dev.ts finds examples/dev/ by it): each such file gets the folder
 *   it has in the source tree, relative to the bundle, so the bundle runs from any folder that keeps
 *   its place relative to the tree (dist/ in a checkout, /app/dist in the image).
 * Packages in a workspace's own node_modules are found the same way, relative to the bundle.
 */
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import * as esbuild from 'esbuild';

export const REPO_ROOT = path.resolve(__dirname, '../..');
const ENTRY = path.join(REPO_ROOT, 'apps/cli/src/main.ts');
const MIGRATIONS = path.join(REPO_ROOT, 'migrations');
const BUNDLED_MIGRATIONS_MODULE = path.join(REPO_ROOT, 'apps/core/src/db/bundled-migrations.ts');
const CORE_SOURCE = path.join(REPO_ROOT, 'apps/core/src');
const BUNDLED_SQL_FUNCTIONS_MODULE = path.join(CORE_SOURCE, 'db/bundled-sql-functions.ts');
/** The bundle's own folder, taken before any module can shadow `__dirname`. */
const BUNDLE_DIR = '__hearthBundleDir';

export interface BuildResult {
  /** The built command: `node <file> <command>`. */
  file: string;
  /** Packages the bundle `require`s from node_modules, each with the source files (from the repository's root) that import it. */
  externals: Map<string, Set<string>>;
}

/** The name of the package a bare import specifier names (`pino/file` → pino, `@a/b/c` → @a/b). */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export function isBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0]);
}

/**
 * Packages compiled into the bundle although they are not workspaces: plain JavaScript with no files
 * loaded by name, whose many small modules cost a start more to find and load one by one than their
 * code does to run. Their own dependencies come with them (knex's lodash, tarn, debug…). TypeBox is
 * some 200 files: inlined, `hearth get plans` took 0.39 s of CPU instead of 0.46 s (eight runs each,
 * same machine). knex is 76 files and loads 252 of lodash's: inlined with them, 0.28 s instead of
 * 0.37 (four runs each). The suites start commands some 400 times.
 */
const INLINED_PACKAGES = new Set(['@sinclair/typebox', 'knex']);

/** knex's dialect table requires every dialect it has; the bundle carries the one Hearth connects with. */
const KNEX_DIALECT = 'postgres';

/** A package's manifest fields the build reads. */
interface PackageManifest {
  dependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/** Dependencies of inlined packages, compiled in with them (found as the build meets them). */
const inlinedDependencies = new Set<string>();

/** Inlined packages' manifests by file, read once (each of their imports asks). */
const manifests = new Map<string, PackageManifest>();

/** The inlined package a file belongs to (the nearest node_modules/<name>/ in its path), if any. */
function inlinedPackageOf(file: string): { name: string; manifest: PackageManifest } | undefined {
  const at = file.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  if (at < 0) return undefined;
  const name = packageName(
    file
      .slice(at + '/node_modules/'.length)
      .split(path.sep)
      .join('/'),
  );
  if (!INLINED_PACKAGES.has(name) && !inlinedDependencies.has(name)) return undefined;
  const manifestFile = path.join(file.slice(0, at), 'node_modules', name, 'package.json');
  let manifest = manifests.get(manifestFile);
  if (!manifest) manifests.set(manifestFile, (manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as PackageManifest));
  return { name, manifest };
}

/**
 * Bare imports stay `require`s of node_modules, except the workspaces (@hearth/*), which are bundled.
 * Each is found as Node finds it from the importing file: most in the root's node_modules, where the
 * bundle's own `require` finds them too; a package npm placed in a workspace's own node_modules (another
 * version than the root's, or not hoisted) is required through createRequire from that folder instead. Every
 * package kept outside is recorded in `externals` with the source files that import it.
 */
function externalPackages(fromBundle: (dir: string) => string, externals: Map<string, Set<string>>): esbuild.Plugin {
  return {
    name: 'hearth-external-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.kind === 'entry-point' || path.isAbsolute(args.path) || args.path.startsWith('@hearth/') || isBuiltin(args.path)) return undefined;
        const name = packageName(args.path);
        if (INLINED_PACKAGES.has(name)) return undefined;
        const inlined = inlinedPackageOf(args.importer);
        if (inlined?.manifest.dependencies?.[name]) {
          inlinedDependencies.add(name);
          return undefined;
        }
        const importer = path.relative(REPO_ROOT, args.importer);
        externals.set(name, (externals.get(name) ?? new Set()).add(importer));
        const home = installedFrom(name, args.resolveDir);
        // An optional peer of an inlined package that is not installed (knex's other drivers, pg-query-stream)
        // stays a require that runs only if its feature is used, as it did with the package outside.
        if (inlined?.manifest.peerDependenciesMeta?.[name]?.optional && home === undefined) return { path: args.path, external: true };
        if (home === undefined) return { errors: [{ text: `${name} (imported by ${importer}) is not installed: run npm ci` }] };
        if (home === REPO_ROOT) return { path: args.path, external: true };
        return { path: args.path, namespace: 'hearth-nested', pluginData: { from: fromBundle(home) } };
      });
      build.onLoad({ filter: /.*/, namespace: 'hearth-nested' }, (args) => {
        const from = `require('node:path').join(${BUNDLE_DIR}, ${JSON.stringify(args.pluginData.from)}, 'package.json')`;
        return { contents: `module.exports = require('node:module').createRequire(${from})(${JSON.stringify(args.path)});`, loader: 'js' };
      });
    },
  };
}

/** The folder whose node_modules holds `name` for a file in `dir`, as Node's lookup finds it. */
function installedFrom(name: string, dir: string): string | undefined {
  for (let at = dir; ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, 'node_modules', name, 'package.json'))) return at;
    if (path.dirname(at) === at) return undefined;
  }
}

/** knex's dialects other than KNEX_DIALECT: a module that says the bundle does not carry them. */
const knexDialects: esbuild.Plugin = {
  name: 'hearth-knex-dialects',
  setup(build) {
    build.onResolve({ filter: /^\.\/[a-z0-9-]+$/ }, (args) => {
      const table = path.join('node_modules', 'knex', 'lib', 'dialects', 'index.js');
      if (!args.importer.endsWith(table) || args.path === `./${KNEX_DIALECT}`) return undefined;
      return { path: args.path.slice(2), namespace: 'hearth-knex-dialect' };
    });
    build.onLoad({ filter: /.*/, namespace: 'hearth-knex-dialect' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`knex's ${args.path} dialect is not in the hearth bundle: it connects to PostgreSQL only`)});`,
      loader: 'js',
    }));
  },
};

/** migrations/*.ts compiled in, as the function bundled-migrations.ts declares (file name → module, loaded when called). */
const bundledMigrations: esbuild.Plugin = {
  name: 'hearth-bundled-migrations',
  setup(build) {
    build.onResolve({ filter: /[/\\]bundled-migrations$/ }, (args) => {
      if (path.resolve(args.resolveDir, `${args.path}.ts`) !== BUNDLED_MIGRATIONS_MODULE) return undefined;
      return { path: BUNDLED_MIGRATIONS_MODULE, namespace: 'hearth-migrations' };
    });
    build.onLoad({ filter: /.*/, namespace: 'hearth-migrations' }, () => {
      const files = fs
        .readdirSync(MIGRATIONS)
        .filter((f) => f.endsWith('.ts'))
        .sort();
      // `require` inside the function: esbuild then starts each migration module (and what it imports) only when called.
      const entries = files.map((f) => `[${JSON.stringify(f)}, require(${JSON.stringify(path.join(MIGRATIONS, f))})]`).join(',\n  ');
      const contents = `export const bundledMigrations = () => new Map([\n  ${entries},\n]);\n`;
      return { contents, loader: 'js', resolveDir: REPO_ROOT, watchDirs: [MIGRATIONS] };
    });
  },
};

/** The database functions' files (apps/core/src/<area>/sql/*.sql) compiled in, as bundled-sql-functions.ts declares. */
const bundledSqlFunctions: esbuild.Plugin = {
  name: 'hearth-bundled-sql-functions',
  setup(build) {
    build.onResolve({ filter: /[/\\]bundled-sql-functions$/ }, (args) => {
      if (path.resolve(args.resolveDir, `${args.path}.ts`) !== BUNDLED_SQL_FUNCTIONS_MODULE) return undefined;
      return { path: BUNDLED_SQL_FUNCTIONS_MODULE, namespace: 'hearth-sql-functions' };
    });
    build.onLoad({ filter: /.*/, namespace: 'hearth-sql-functions' }, () => {
      const files: { file: string; sql: string }[] = [];
      const folders: string[] = [];
      for (const area of fs.readdirSync(CORE_SOURCE, { withFileTypes: true })) {
        const folder = path.join(CORE_SOURCE, area.name, 'sql');
        if (!area.isDirectory() || !fs.existsSync(folder)) continue;
        folders.push(folder);
        for (const name of fs.readdirSync(folder).filter((f) => f.endsWith('.sql'))) {
          files.push({ file: `${area.name}/sql/${name}`, sql: fs.readFileSync(path.join(folder, name), 'utf8') });
        }
      }
      files.sort((a, b) => a.file.localeCompare(b.file));
      return { contents: `export const bundledSqlFunctions = ${JSON.stringify(files)};`, loader: 'js', watchDirs: folders };
    });
  },
};

/** A workspace file that uses `__dirname` gets its source folder, found from where the bundle is. */
function sourceDirnames(fromBundle: (dir: string) => string): esbuild.Plugin {
  return {
    name: 'hearth-source-dirnames',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.split(path.sep).includes('node_modules')) return undefined;
        const source = fs.readFileSync(args.path, 'utf8');
        if (!/\b__dirname\b/.test(source)) return undefined;
        // Kept on the first line, so the file's own lines stay where they were (one line lower).
        const prelude = `const __dirname = require('node:path').join(${BUNDLE_DIR}, ${JSON.stringify(fromBundle(path.dirname(args.path)))});`;
        return { contents: `${prelude}\n${source}`, loader: 'ts' };
      });
    },
  };
}

/**
 * Builds the bundle into `outdir` (dist/ unless told): hearth.js and its source map. `root` is where
 * the bundle finds the repository's tree at run time: the checkout itself, unless the bundle is to run
 * in a copy of its layout (as a test's production install does: package.json files and node_modules).
 */
export async function buildBundle(outdir = path.join(REPO_ROOT, 'dist'), root = REPO_ROOT): Promise<BuildResult> {
  outdir = path.resolve(outdir);
  const fromBundle = (dir: string) => path.relative(outdir, path.join(path.resolve(root), path.relative(REPO_ROOT, dir)));
  const externals = new Map<string, Set<string>>();
  await esbuild.build({
    entryPoints: { hearth: ENTRY },
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Class and function names as in the sources (errors and logs show them), never renamed.
    keepNames: true,
    sourcemap: 'linked',
    banner: { js: `const ${BUNDLE_DIR} = __dirname;` },
    plugins: [externalPackages(fromBundle, externals), knexDialects, bundledMigrations, bundledSqlFunctions, sourceDirnames(fromBundle)],
    absWorkingDir: REPO_ROOT,
    logLevel: 'silent',
  });
  return { file: path.join(outdir, 'hearth.js'), externals };
}

if (require.main === module) {
  const outdir = process.argv[2] ?? path.join(REPO_ROOT, 'dist');
  buildBundle(outdir).then(
    (built) => {
      const size = fs.statSync(built.file).size;
      process.stdout.write(
        `${path.relative(process.cwd(), built.file)}: ${(size / 1024).toFixed(0)} KiB; packages from node_modules: ${[...built.externals.keys()].sort().join(', ')}\n`,
      );
    },
    (err: Error) => {
      process.stderr.write(`build: ${err.message}\n`);
      process.exit(1);
    },
  );
}
