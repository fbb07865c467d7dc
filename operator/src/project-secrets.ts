/**
 * A Project's secrets that live in Kubernetes Secrets of its namespace: the custom dashboard's client
 * secret (`spec.dashboard.clientSecretRef.secretKeyRef`) and the store's publisher key
 * (`spec.store.publisherKey.secretRef`). The operator reads them on every reconcile of the Project and
 * stores each sealed to the API processes' public key (apps/core/src/tenancy/project-secrets.ts): the
 * operator holds no master key and can never read one back. A secret's value goes to the sealing only:
 * never into a log line, a status or an Event.
 *
 * Only a Secret that opts in is read: it must carry the label `hearth.gg/secret-for: <project name>`.
 * The operator may get every Secret of a namespace it watches (its own key Secrets are there), so
 * without this a Project could name the master key's or the database URL's Secret and have the
 * operator carry it to the API (a confused deputy); a Secret without the label, or labelled for
 * another Project, is refused (Ready=False SecretNotOptedIn) before its data is looked at. The
 * operator watches the Secrets carrying that label (secret-watch.ts), so a rotated value, a label
 * added or a Secret deleted reconciles the Project within seconds, not at the relist.
 */
import type { ProjectSecretName } from '@hearth/core/tenancy';
import type { ProjectSpecT } from '@hearth/core/contract';
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

/** The label by which a Secret opts in to be read for one Project (its value: the Project's name). */
export const SECRET_FOR_LABEL = 'hearth.gg/secret-for';

export const PROJECT_SECRET_NAMES = Object.keys(REFERENCES) as ProjectSecretName[];

/** The secret the Project names, or null when it names none; a missing Secret or key is a ReadyRefusal (Ready=False). */
export async function projectSecretOf(
  kube: KubeClients,
  project: CustomObject,
  spec: ProjectSpecT,
  name: ProjectSecretName,
): Promise<ProjectSecretRead | null> {
  const { field, refOf } = REFERENCES[name];
  const ref = refOf(spec);
  if (!ref) return null;
  const namespace = namespaceOf(project.metadata);
  try {
    const secret = await kube.core.readNamespacedSecret({ name: ref.name, namespace });
    // Before anything of its data is looked at: a Secret not labelled for this Project is not this Project's to read.
    const optedFor = secret.metadata?.labels?.[SECRET_FOR_LABEL];
    if (optedFor !== project.metadata.name) {
      const label = `${SECRET_FOR_LABEL}=${project.metadata.name}`;
      throw new ReadyRefusal(
        'SecretNotOptedIn',
        project.metadata.name.length > 63
          ? `Secret ${namespace}/${ref.name} cannot be opted in for this Project (${field}): a label value holds at most 63 characters, and the Project's name is longer; give the Project a shorter name`
          : optedFor === undefined
            ? `Secret ${namespace}/${ref.name} is not labelled ${label} (${field}): the operator reads only Secrets labelled for this Project; label it if it is meant for it`
            : `Secret ${namespace}/${ref.name} is labelled for Project "${optedFor}", not this one (${field}): the operator reads only Secrets labelled ${label}`,
      );
    }
    const data = secret.data?.[ref.key];
    if (data === undefined) throw new ReadyRefusal('SecretMissing', `Secret ${namespace}/${ref.name} has no key "${ref.key}" (${field})`);
    const value = Buffer.from(data, 'base64').toString('utf8').trim();
    if (!value) throw new ReadyRefusal('SecretMissing', `Secret ${namespace}/${ref.name} key "${ref.key}" is empty (${field})`);
    return { origin: `${secret.metadata?.uid ?? ''}/${secret.metadata?.resourceVersion ?? ''}/${ref.key}`, value };
  } catch (err) {
    if (isNotFound(err)) {
      throw new ReadyRefusal(
        'SecretMissing',
        `Secret ${namespace}/${ref.name} does not exist (${field}); create it with the label ${SECRET_FOR_LABEL}=${project.metadata.name}`,
      );
    }
    throw err;
  }
}
