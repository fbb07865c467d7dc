/**
 * Temporary folders of one test file, removed when the file's tests are done (its afterAll): a
 * passing run leaves nothing in the temporary folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];

// Each test file has its own module registry, so this runs once per file while it loads (jest
// takes hooks only then), and removes what that file made.
if (typeof afterAll === 'function') {
  afterAll(() => {
    for (const folder of made.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
  });
}

export function testTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}
