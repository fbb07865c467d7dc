/**
 * A Project's secrets that live in Kubernetes Secrets of its namespace: the custom dashboard's client
 * secret (`spec.dashboard.clientSecretRef.secretKeyRef`) and the store's publisher key
 * (`spec.store.publisherKey.secretRef`). The operator reads them on every reconcile of the Project (so
 * a rotated Secret is carried over by the next relist, HEARTH_OPERATOR_RELIST_SECONDS, or at once on
 * any change of the Project) and stores each sealed to the API processes' public key
 * (apps/core/src/tenancy/project-secrets.ts): the operator holds no master key and can never read one
 * back. A secret's value goes to the sealing only: never into a log line, a status or an Event.
 */
import type { ProjectSecretName, ProjectSpecT } from '@hearth/core';
import { type CustomObject, type KubeClients, isNotFound, namespaceOf } from './kube';
import { ReadyRefusal } from './refusal';

export interface ProjectSecretRead {
  /** The Secret's uid, resourceVersion and key: the same origin is not sealed and written again. */
  origin: string;
  value: string;
}

/** Where each secret a Project may name is named in its spec (the field said in a refusal). */
const REFERENCES: Record<ProjectSecretName, { field: string; refOf: (spec: ProjectSpecT) => { name: string; key: string } | undefined }> = {
  dashboardClientSecret: { field: 'spec.dashboard.clientSecretRef', refOf: (spec) => spec.dashboard?.clientSecretRef?.secretKeyRef },
  storePublisherKey: {
    field: 'spec.store.publisherKey.secretRef',
    refOf: (spec) => (spec.store && 'secretRef' in spec.store.publisherKey ? spec.store.publisherKey.secretRef : undefined),
  },
};

export const PROJECT_SECRET_NAMES = Object.keys(REFERENCES) as ProjectSecretName[];

/** The secret the Project names, or null when it names none; a missing Secret or key is a ReadyRefusal (Ready=False). */
export async function projectSecretOf(kube: KubeClients, project: CustomObject, spec: ProjectSpecT, name: ProjectSecretName): Promise<ProjectSecretRead | null> {
  const { field, refOf } = REFERENCES[name];
  const ref = refOf(spec);
  if (!ref) return null;
  const namespace = namespaceOf(project.metadata);
  try {
    const secret = await kube.core.readNamespacedSecret({ name: ref.name, namespace });
    const data = secret.data?.[ref.key];
    if (data === undefined) throw new ReadyRefusal('SecretMissing', `Secret ${namespace}/${ref.name} has no key "${ref.key}" (${field})`);
    const value = Buffer.from(data, 'base64').toString('utf8').trim();
    if (!value) throw new ReadyRefusal('SecretMissing', `Secret ${namespace}/${ref.name} key "${ref.key}" is empty (${field})`);
    return { origin: `${secret.metadata?.uid ?? ''}/${secret.metadata?.resourceVersion ?? ''}/${ref.key}`, value };
  } catch (err) {
    if (isNotFound(err)) throw new ReadyRefusal('SecretMissing', `Secret ${namespace}/${ref.name} does not exist (${field})`);
    throw err;
  }
}
