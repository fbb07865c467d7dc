/**
 * The operator's finalizer. A resource of a kind Hearth cleans up after (isRemovable: a revoked
 * ServerKey, removed content…) gets it on its first reconcile; deleted, it stays until the operator
 * has run removeManifest, then the operator takes the finalizer off and Kubernetes lets it go.
 * Both patches are JSON patches whose `test` makes a concurrent change fail (retried) rather than
 * overwrite another controller's finalizers.
 */
import type { CustomObject, CustomResources } from './kube';

export const FINALIZER = 'hearth.gg/cleanup';

export function hasFinalizer(obj: CustomObject): boolean {
  return obj.metadata.finalizers?.includes(FINALIZER) ?? false;
}

export function addFinalizer(resources: CustomResources, obj: CustomObject): Promise<CustomObject> {
  const current = obj.metadata.finalizers;
  return resources.patch(obj.metadata, [
    { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
    current ? { op: 'add', path: '/metadata/finalizers/-', value: FINALIZER } : { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
  ]);
}

export function removeFinalizer(resources: CustomResources, obj: CustomObject): Promise<CustomObject> {
  const current = obj.metadata.finalizers ?? [];
  return resources.patch(obj.metadata, [
    { op: 'test', path: '/metadata/finalizers', value: current },
    { op: 'replace', path: '/metadata/finalizers', value: current.filter((f) => f !== FINALIZER) },
  ]);
}
