/**
 * A Project's custom-dashboard client secret: the key of the Kubernetes Secret its
 * `spec.dashboard.clientSecretRef.secretKeyRef` names, in the Project's namespace. The operator
 * reads it on every reconcile of the Project (so a rotated Secret is carried over by the next
 * relist, HEARTH_OPERATOR_RELIST_SECONDS, or at once on any change of the Project) and stores it
 * sealed to the API processes' public key (apps/core/src/dashboards/client-secrets.ts): the operator
 * holds no master key and can never read a client secret back.
 */
import type { ProjectSpecT } from '@hearth/core';
import { type CustomObject, type KubeClients, isNotFound, namespaceOf } from './kube';
import { Refusal } from './refusal';

export interface ClientSecretRead {
  /** The Secret's uid, resourceVersion and key: the same origin is not sealed and written again. */
  origin: string;
  value: string;
}

/** The client secret the Project names, or null when it names none; a missing Secret or key is a Refusal (Ready=False). */
export async function dashboardClientSecretOf(kube: KubeClients, project: CustomObject, spec: ProjectSpecT): Promise<ClientSecretRead | null> {
  const ref = spec.dashboard?.clientSecretRef?.secretKeyRef;
  if (!ref) return null;
  const namespace = namespaceOf(project.metadata);
  try {
    const secret = await kube.core.readNamespacedSecret({ name: ref.name, namespace });
    const data = secret.data?.[ref.key];
    if (data === undefined) throw new Refusal('SecretMissing', `Secret ${namespace}/${ref.name} has no key "${ref.key}" (spec.dashboard.clientSecretRef)`);
    return { origin: `${secret.metadata?.uid ?? ''}/${secret.metadata?.resourceVersion ?? ''}/${ref.key}`, value: Buffer.from(data, 'base64').toString('utf8').trim() };
  } catch (err) {
    if (isNotFound(err)) throw new Refusal('SecretMissing', `Secret ${namespace}/${ref.name} does not exist (spec.dashboard.clientSecretRef)`);
    throw err;
  }
}
