/**
 * "The previous release" of this checkout, and a runnable copy of it (test/upgrade): the code a
 * rollback goes back to, and the code still serving while a rolling upgrade replaces it.
 *
 * - The newest tag `v*` that HEAD contains and that is not on HEAD itself (a release commit is
 *   compared with the release before it).
 * - Without such a tag: the first parent of the newest commit of HEAD's first-parent line that added
 *   a file under migrations/, i.e. main as it was just before its newest migration landed. The first
 *   parent, not any parent: a merged branch's own commits never ran as main, and the merge is
 *   where its migration reached main.
 *
 * The copy is `git archive` of that commit in a temporary folder, with its dependencies: the same
 * package-lock as this checkout's takes this checkout's node_modules (hard-linked: seconds); another
 * lock is installed once with `npm ci` and kept by the lock's hash under ~/.cache/hearth/previous-release.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../support/hearth-process';

export interface PreviousRelease {
  commit: string;
  /** How it was chosen, for the log: `tag v1.2.0` or `the parent of <commit> (<subject>), the newest migration's`. */
  chosenAs: string;
}

/** Why there is no previous release to test against (a shallow clone, an export without git). */
export class NoPreviousRelease extends Error {}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export function findPreviousRelease(): PreviousRelease {
  try {
    git(['rev-parse', '--git-dir']);
  } catch {
    throw new NoPreviousRelease(`${REPO_ROOT} is not a git checkout: the previous release is found in its history`);
  }
  if (git(['rev-parse', '--is-shallow-repository']) === 'true') {
    throw new NoPreviousRelease('this is a shallow clone: the previous release is not in its history (`git fetch --unshallow --tags` first)');
  }
  const tag = git(['tag', '--list', 'v*', '--merged', 'HEAD', '--no-contains', 'HEAD', '--sort=-v:refname']).split('\n').find(Boolean);
  if (tag) return { commit: git(['rev-parse', `${tag}^{commit}`]), chosenAs: `tag ${tag}` };
  const newest = git(['log', '--first-parent', '--diff-filter=A', '--format=%H %s', '-1', 'HEAD', '--', 'migrations/']);
  if (!newest) throw new NoPreviousRelease('no commit of this history adds a migration, and there is no tag v*');
  const [commit, ...subject] = newest.split(' ');
  let parent: string;
  try {
    parent = git(['rev-parse', '--verify', '--quiet', `${commit}^1`]);
  } catch {
    throw new NoPreviousRelease(`the newest migration came with the first commit (${commit.slice(0, 12)}): there is nothing before it`);
  }
  return { commit: parent, chosenAs: `the first parent of ${commit.slice(0, 12)} ("${subject.join(' ')}"), the newest commit adding a migration` };
}

/** The migrations (file names) of a checkout's migrations/ folder. */
export function migrationFiles(root: string): string[] {
  return fs
    .readdirSync(path.join(root, 'migrations'))
    .filter((f) => /^\d{14}_.+\.ts$/.test(f))
    .sort();
}

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The node_modules folders of a checkout: the top one and each workspace's own (npm puts a conflicting version there). */
function nodeModulesFolders(root: string): string[] {
  const workspaces: string[] = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).workspaces ?? [];
  return ['node_modules', ...workspaces.map((w) => path.join(w, 'node_modules'))].filter((f) => fs.existsSync(path.join(root, f)));
}

/** Copies `from/<folder>` to `to/<folder>` for each folder: hard links where the file system allows, else a copy. Symbolic links stay relative, so a workspace link points into `to`. */
function copyFolders(from: string, to: string, folders: string[]): void {
  for (const folder of folders) {
    fs.mkdirSync(path.dirname(path.join(to, folder)), { recursive: true });
    const linked = spawnSync('cp', ['-al', path.join(from, folder), path.join(to, folder)], { stdio: 'ignore' });
    if (linked.status !== 0) {
      fs.rmSync(path.join(to, folder), { recursive: true, force: true });
      execFileSync('cp', ['-a', path.join(from, folder), path.join(to, folder)], { stdio: 'ignore' });
    }
  }
}

const CACHE = path.join(process.env.HEARTH_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'hearth'), 'previous-release');
/** How many installs the cache keeps (about 300 MB each). */
const CACHE_KEEP = 3;

/** Removes all but the CACHE_KEEP installs used last (and any left unfinished). */
function pruneCache(): void {
  const entries = fs.readdirSync(CACHE).map((name) => {
    const mark = path.join(CACHE, name, '.complete');
    return { name, used: fs.existsSync(mark) ? fs.statSync(mark).mtimeMs : 0 };
  });
  entries.sort((a, b) => b.used - a.used);
  for (const entry of entries.slice(CACHE_KEEP)) fs.rmSync(path.join(CACHE, entry.name), { recursive: true, force: true });
}

/**
 * The previous release's files in `dir` (`git archive`, nothing of this checkout's work tree) with
 * its dependencies installed; answers how they were got, for the log.
 */
export function checkOut(release: PreviousRelease, dir: string): string {
  execFileSync('bash', ['-c', 'set -o pipefail; git archive "$1" | tar -x -C "$2"', 'archive', release.commit, dir], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lock = sha256(path.join(dir, 'package-lock.json'));
  if (lock === sha256(path.join(REPO_ROOT, 'package-lock.json')) && fs.existsSync(path.join(REPO_ROOT, 'node_modules'))) {
    copyFolders(REPO_ROOT, dir, nodeModulesFolders(REPO_ROOT));
    return "the same package-lock.json as this checkout's: its node_modules, hard-linked";
  }
  const cached = path.join(CACHE, lock);
  if (fs.existsSync(path.join(cached, '.complete'))) {
    const now = new Date();
    fs.utimesSync(path.join(cached, '.complete'), now, now); // used: kept by pruneCache
    copyFolders(cached, dir, nodeModulesFolders(cached));
    return `package-lock.json ${lock.slice(0, 12)}: node_modules from ${cached}`;
  }
  const installed = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8', timeout: 300_000 });
  if (installed.status !== 0) throw new Error(`npm ci of the previous release (${release.commit}) failed:\n${installed.stdout}\n${installed.stderr}`);
  // Kept for the next run: the package.json (for its workspaces) and each node_modules, then the mark.
  fs.rmSync(cached, { recursive: true, force: true });
  fs.mkdirSync(cached, { recursive: true });
  fs.copyFileSync(path.join(dir, 'package.json'), path.join(cached, 'package.json'));
  copyFolders(dir, cached, nodeModulesFolders(dir));
  fs.writeFileSync(path.join(cached, '.complete'), `${release.commit}\n`);
  pruneCache();
  return `package-lock.json ${lock.slice(0, 12)}: npm ci, kept in ${cached}`;
}
