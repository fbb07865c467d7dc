/**
 * Where the API process finds a dashboard's client secret, which a Project names by reference
 * (`clientSecretRef.secretKeyRef { name, key }`) and never holds. Looked for, in this order:
 * - a file `<HEARTH_DASHBOARD_SECRETS_DIR>/<namespace>/<name>/<key>` (in Kubernetes, the Secret
 *   mounted as a volume at `<dir>/<namespace>/<name>`; outside it, any file laid out the same way);
 * - an environment variable `HEARTH_DASHBOARD_SECRET_<NAMESPACE>_<NAME>_<KEY>`, upper-cased, every
 *   character other than a letter or digit written `_`.
 * The secret is read at each sign-in (a rotated file is taken at once) and is never logged.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export interface DashboardSecretSource {
  read(namespace: string, ref: { name: string; key: string }): Promise<string | undefined>;
}

export function secretVariableOf(namespace: string, ref: { name: string; key: string }): string {
  return `HEARTH_DASHBOARD_SECRET_${[namespace, ref.name, ref.key]
    .join('_')
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '_')}`;
}

export function dashboardSecretsFrom(env: NodeJS.ProcessEnv, folder: string | undefined): DashboardSecretSource {
  return {
    async read(namespace, ref) {
      if (folder) {
        try {
          return (await readFile(path.join(folder, namespace, ref.name, ref.key), 'utf8')).trim();
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
      const value = env[secretVariableOf(namespace, ref)];
      return value === undefined || value === '' ? undefined : value;
    },
  };
}
