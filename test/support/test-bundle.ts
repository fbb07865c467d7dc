/**
 * The `hearth` executable the tests start as a process (test/cli, the crash worker's and the store
 * report's process tests): `npm run build`'s bundle of this tree, built once per jest run by the global
 * setup. A bundled command starts in about half the time of the TypeScript sources through tsx (0.7 s
 * against 1.5 s on two cores), and the suites start it some hundreds of times; it is also what the
 * image runs. test/cli/dev.test.ts runs the source executable, what `make dev` starts.
 *
 * The bundle's packages stay `require`s of node_modules, found by walking up from the bundle, so it
 * is written inside the checkout: node_modules/.cache/, a folder per run, removed by the teardown.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildBundle } from '../../apps/cli/build';
import { REPO_ROOT } from './hearth-process';

const FOLDER = path.join(REPO_ROOT, 'node_modules', '.cache', 'hearth-test-bundle');

/** Builds the bundle into a folder of this run's own; answers the file to run. */
export async function buildTestBundle(): Promise<string> {
  fs.mkdirSync(FOLDER, { recursive: true });
  const outdir = fs.mkdtempSync(path.join(FOLDER, 'run-'));
  return (await buildBundle(outdir)).file;
}

/** Removes a run's bundle (the folder `buildTestBundle` made for it). */
export function removeTestBundle(file: string): void {
  if (path.dirname(path.dirname(file)) === FOLDER) fs.rmSync(path.dirname(file), { recursive: true, force: true });
}
