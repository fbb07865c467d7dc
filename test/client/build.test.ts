/**
 * The SDK as it ships: its generated part matches the API's document of today, and its core, bundled
 * for a browser and minified, stays within its size budget (gzip).
 */
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';

const CLIENT = path.join(__dirname, '..', '..', 'apps', 'client');
/** The budget of the SDK's core, minified and gzipped (issue #37). */
const BUDGET_BYTES = 15 * 1024;

test('src/generated is what apps/client/generate.ts writes from the document (make client)', () => {
  // Its own process: openapi-typescript is an ES module jest's transform does not take.
  const run = () => execFileSync(process.execPath, ['--import', 'tsx', path.join(CLIENT, 'generate.ts'), '--check'], { encoding: 'utf8', stdio: 'pipe' });
  expect(run).not.toThrow();
});

test(`the SDK bundled for a browser, minified and gzipped, is at most ${BUDGET_BYTES} bytes`, async () => {
  const bundle = await build({
    entryPoints: [path.join(CLIENT, 'src', 'index.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const code = bundle.outputFiles[0].contents;
  const gzipped = gzipSync(code, { level: 9 }).length;
  // Printed so a run shows the figure, not only that it fits.
  console.log(`@hearth/client: ${code.length} bytes minified, ${gzipped} bytes gzipped (budget ${BUDGET_BYTES})`);
  expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  // Nothing of Node's in a browser bundle.
  expect(Buffer.from(code).toString()).not.toMatch(/require\("node:/);
});
