/**
 * Temporary folders of one test file, removed when the file's tests are done (its afterAll): a
 * passing run leaves nothing in the temporary folder. Made while a file loads or inside its tests.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];
let hooked = false;

export function testTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  if (!hooked && typeof afterAll === 'function') {
    hooked = true;
    // Registered once per test file (each file has its own module registry).
    afterAll(() => {
      for (const folder of made.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
    });
  }
  return dir;
}
