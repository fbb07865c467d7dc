/**
 * The store's publisher web API key of a project, read where the project's settings say it is
 * (`spec.store.publisherKey`), never from the settings themselves:
 * - `secretRef { name, key }`: a Secret of the project's namespace. In Kubernetes the operator reads
 *   it and stores it on the project's row sealed to the API processes' key
 *   (tenancy/project-secrets.ts), whatever the namespace; that is read first. Else (a single-project
 *   install whose chart mounts the Secret) the file HEARTH_STORE_SECRETS_DIR/<namespace>/<name>/<key>
 *   (default /var/run/hearth/store-secrets), as Secret volumes lay out their entries.
 * - `file`: a file of the API process's machine (outside Kubernetes).
 * - `env`: an environment variable of the API process (outside Kubernetes).
 * The key is read at each use (a rotated Secret is seen without a restart) and goes nowhere but the
 * store call: no log line, no error message, no answer carries it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Queryable } from '../db/knex';
import type { PublisherKeySourceT } from '../contract/store';
import type { EnvironmentContext } from '../tenancy/environments';
import { type ProjectSecretKeys, storedProjectSecret } from '../tenancy/project-secrets';

export const DEFAULT_STORE_SECRETS_DIR = '/var/run/hearth/store-secrets';

/** The key cannot be read: the project is not set up to sell (`unavailable`). */
export class PublisherKeyMissing extends Error {
  constructor(where: string) {
    super(`the store's publisher key is not readable from ${where}`);
    this.name = 'PublisherKeyMissing';
  }
}

export class PublisherKeys {
  constructor(
    private readonly sealing: ProjectSecretKeys,
    private readonly processEnv: Record<string, string | undefined> = process.env,
  ) {}

  async read(db: Queryable, env: Pick<EnvironmentContext, 'namespace' | 'project'>, source: PublisherKeySourceT): Promise<string> {
    let key: string | undefined;
    let where: string;
    if ('env' in source) {
      where = `the environment variable ${source.env}`;
      key = this.processEnv[source.env];
    } else if ('file' in source) {
      where = `the file ${source.file}`;
      key = await readFile(source.file, 'utf8').catch(() => undefined);
    } else {
      where = `the Secret ${source.secretRef.name} (entry ${source.secretRef.key})`;
      const mounted = path.join(
        this.processEnv.HEARTH_STORE_SECRETS_DIR || DEFAULT_STORE_SECRETS_DIR,
        env.namespace,
        source.secretRef.name,
        source.secretRef.key,
      );
      key = (await storedProjectSecret(db, this.sealing, env.project.id, 'storePublisherKey')) ?? (await readFile(mounted, 'utf8').catch(() => undefined));
    }
    const trimmed = key?.trim();
    // A key is printable ASCII without spaces: anything else would go into the query as something else.
    if (!trimmed || !/^[\x21-\x7e]{1,256}$/.test(trimmed)) throw new PublisherKeyMissing(where);
    return trimmed;
  }
}
